package plan

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/domains"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// liveFixture is a Cluster c whose Pipeline selects targets t0..t(n-1), each recorded on the pod given.
func liveFixture(spec v1alpha1.ClusterSpec, recorded map[string]v1alpha1.TargetClusterState, n int) liveObjects {
	objs := liveObjects{
		cluster: &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}, Spec: spec},
		objects: selection.Objects{
			Pipelines: []v1alpha1.Pipeline{{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.PipelineSpec{
				ClusterRef: "c", SubscriptionRefs: []string{"s"},
				TargetSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"role": "leaf"}}}}}},
			Subscriptions: []v1alpha1.Subscription{{ObjectMeta: metav1.ObjectMeta{Name: "s"}}},
		},
	}
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		t := v1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"role": "leaf"}}}
		if st, ok := recorded[name]; ok {
			t.Status.ClusterStates = map[string]v1alpha1.TargetClusterState{"c": st}
		}
		objs.objects.Targets = append(objs.objects.Targets, t)
	}
	return objs
}

func TestPlanLiveNamesTheDomainsPodsAndPlacesOverEveryDomain(t *testing.T) {
	spec := v1alpha1.ClusterSpec{Replicas: ptr.To[int32](2), Domains: []v1alpha1.ClusterDomain{{Name: "a"}, {Name: "b"}}}
	recorded := map[string]v1alpha1.TargetClusterState{}
	for i := range 8 {
		pod := "c-a-0"
		if i%2 == 1 {
			pod = "c-b-0"
		}
		recorded[fmt.Sprintf("t%d", i)] = v1alpha1.TargetClusterState{Pod: pod, State: v1alpha1.TargetAssigned}
	}
	a, err := planLive(liveFixture(spec, recorded, 8), overrides{replicas: ptr.To[int32](4)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range a.Pods {
		names = append(names, p.Name)
	}
	if want := []string{"c-a-0", "c-a-1", "c-b-0", "c-b-1"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("pods %v, want %v", names, want)
	}
	in := placement.Input{Pods: []int{domains.Slot(0, 0), domains.Slot(0, 1), domains.Slot(1, 0), domains.Slot(1, 1)},
		Current: map[string]int{}}
	for i := range 8 {
		name := fmt.Sprintf("t%d", i)
		in.Targets = append(in.Targets, placement.Target{Name: name})
		in.Current[name] = domains.Slot(i%2, 0)
	}
	want := placement.Place(in)
	if len(a.Moves) != want.LowerBoundMoves || a.LowerBoundMoves != want.LowerBoundMoves || a.Capacity != 2 {
		t.Errorf("moves %d, lower bound %d, capacity %d; want %d, %d, 2", len(a.Moves), a.LowerBoundMoves, a.Capacity,
			want.LowerBoundMoves, want.LowerBoundMoves)
	}
	for _, p := range a.Pods {
		if !p.DesiredAfter || len(p.After) != 2 {
			t.Errorf("pod %s: desired after %v with %v, want 2 targets", p.Name, p.DesiredAfter, p.After)
		}
	}
}

func TestPlanLiveFeedsLastPodsAndKeepsSkippedAndUnselectedTargetsOut(t *testing.T) {
	recorded := map[string]v1alpha1.TargetClusterState{
		// t0 is away from pod 1, which was not ready: once every pod runs, it goes back there.
		"t0": {Pod: "c-0", LastPod: "c-1", State: v1alpha1.TargetAssigned},
		"t1": {Pod: "c-0", State: v1alpha1.TargetAssigned},
		"t2": {State: v1alpha1.TargetSkipped, Message: "not sent to any collector"},
		"t3": {State: v1alpha1.TargetUnassigned, LastPod: "c-1"},
	}
	objs := liveFixture(v1alpha1.ClusterSpec{Replicas: ptr.To[int32](2)}, recorded, 4)
	objs.objects.Targets = append(objs.objects.Targets, v1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: "spine"},
		Status: v1alpha1.TargetStatus{ClusterStates: map[string]v1alpha1.TargetClusterState{"c": {Pod: "c-1"}}}})
	a, err := planLive(objs, overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Skipped, []string{"t2"}) || !reflect.DeepEqual(a.UnassignedNow, []string{"t3"}) ||
		len(a.UnassignedAfter) != 0 {
		t.Errorf("skipped %v, unassigned now %v after %v", a.Skipped, a.UnassignedNow, a.UnassignedAfter)
	}
	after := map[string]string{}
	for _, p := range a.Pods {
		for _, name := range p.After {
			after[name] = p.Name
		}
	}
	if want := map[string]string{"t0": "c-1", "t1": "c-0", "t3": "c-1"}; !reflect.DeepEqual(after, want) {
		t.Errorf("after %v, want %v", after, want)
	}
	if want := []liveMove{{Target: "t0", From: "c-0", To: "c-1"}}; !reflect.DeepEqual(a.Moves, want) {
		t.Errorf("moves %v, want %v", a.Moves, want)
	}
}

func TestPlanLiveWithoutTargetsAnswersEmptyLists(t *testing.T) {
	a, err := planLive(liveFixture(v1alpha1.ClusterSpec{Replicas: ptr.To[int32](0)}, nil, 0), overrides{podCapacity: ptr.To[int32](0)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Pods == nil || a.UnassignedNow == nil || a.UnassignedAfter == nil || a.Skipped == nil || a.Moves == nil {
		t.Errorf("a list is nil: %+v", a)
	}
}

// A Cluster that weighs by Declared is planned by weight, as the reconciler places it: a heavy target counts
// its weight against the capacity, and the capacity is in units.
func TestPlanLivePlacesByDeclaredWeightWhenTheClusterDoes(t *testing.T) {
	spec := v1alpha1.ClusterSpec{Replicas: ptr.To[int32](2),
		TargetDistribution: v1alpha1.TargetDistribution{WeighBy: v1alpha1.WeighByDeclared}}
	objs := liveFixture(spec, nil, 6)
	objs.objects.Targets[0].Spec.Weight = 5 // 10 units in all: 5 per pod, t0 alone on its pod
	a, err := planLive(objs, overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Capacity != 5 {
		t.Errorf("capacity %d, want 5 units", a.Capacity)
	}
	for _, p := range a.Pods {
		if slices.Contains(p.After, "t0") && len(p.After) != 1 {
			t.Errorf("pod %s holds %v with t0 of weight 5, want t0 alone", p.Name, p.After)
		}
	}

	objs.cluster.Spec.TargetDistribution.WeighBy = v1alpha1.WeighByCount
	byCount, err := planLive(objs, overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if byCount.Capacity != 3 {
		t.Errorf("counting, capacity %d, want 3 targets", byCount.Capacity)
	}
}
