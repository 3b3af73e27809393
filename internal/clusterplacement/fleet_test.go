package clusterplacement

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/domains"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

func TestPlaceKeepsHeldAndSkippedTargetsOutOfPlacement(t *testing.T) {
	tests := []struct {
		name      string
		fleet     Fleet
		held      map[string]int
		assigned  map[string]int
		last      map[string]int
		placedIn  []string // the targets placement was given
		unplaced  []string
		lowerMove int
	}{
		{
			name: "a target on a holding pod stays there, outside placement, and keeps its last pod",
			fleet: Fleet{Desired: []int{0, 1}, Ready: []int{0}, Holding: []int{1}, Placeable: []string{"a", "b"},
				Current: map[string]int{"a": 0, "b": 1}, Last: map[string]int{"b": 0}},
			held: map[string]int{"b": 1}, assigned: map[string]int{"a": 0}, last: map[string]int{"b": 0},
			placedIn: []string{"a"}, unplaced: []string{},
		},
		{
			name: "a skipped target goes nowhere and remembers its last pod, or its current one",
			fleet: Fleet{Desired: []int{0, 1}, Ready: []int{0, 1}, Placeable: []string{"a"}, Skipped: []string{"s", "t", "u"},
				Current: map[string]int{"a": 1, "s": 0, "t": 1}, Last: map[string]int{"t": 0}},
			held: map[string]int{}, assigned: map[string]int{"a": 1}, last: map[string]int{"s": 0, "t": 0},
			placedIn: []string{"a"}, unplaced: []string{},
		},
		{
			name: "a fixed capacity leaves the excess unassigned, remembering where it was",
			fleet: Fleet{PodCapacity: 1, Desired: []int{0}, Ready: []int{0}, Placeable: []string{"a", "b"},
				Current: map[string]int{"a": 0, "b": 0}, Last: map[string]int{}},
			// b scores higher on pod 0 than a (rendezvous on the names), so b stays.
			held: map[string]int{}, assigned: map[string]int{"b": 0}, last: map[string]int{"a": 0},
			placedIn: []string{"a", "b"}, unplaced: []string{"a"}, lowerMove: 1,
		},
		{
			name: "a last pod scaled away is forgotten once the target has another pod",
			fleet: Fleet{Desired: []int{0}, Ready: []int{0}, Placeable: []string{"a"},
				Current: map[string]int{"a": 1}, Last: map[string]int{"a": 2}},
			held: map[string]int{}, assigned: map[string]int{"a": 0}, last: map[string]int{},
			placedIn: []string{"a"}, unplaced: []string{}, lowerMove: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Place(tt.fleet)
			if !reflect.DeepEqual(p.Held, tt.held) {
				t.Errorf("held %v, want %v", p.Held, tt.held)
			}
			if !reflect.DeepEqual(p.Result.Assignments, tt.assigned) {
				t.Errorf("assignments %v, want %v", p.Result.Assignments, tt.assigned)
			}
			if !reflect.DeepEqual(p.Last, tt.last) {
				t.Errorf("last %v, want %v", p.Last, tt.last)
			}
			var given []string
			for _, target := range p.Input.Targets {
				given = append(given, target.Name)
			}
			if !reflect.DeepEqual(given, tt.placedIn) {
				t.Errorf("placement given %v, want %v", given, tt.placedIn)
			}
			if !reflect.DeepEqual(p.Result.Unassigned, tt.unplaced) {
				t.Errorf("unassigned %v, want %v", p.Result.Unassigned, tt.unplaced)
			}
			if p.Result.LowerBoundMoves != tt.lowerMove {
				t.Errorf("lower bound %d, want %d", p.Result.LowerBoundMoves, tt.lowerMove)
			}
			for name, o := range tt.held {
				if got, ok := p.Assignment(name); !ok || got != o {
					t.Errorf("Assignment(%q) = %d, %v; want %d", name, got, ok, o)
				}
			}
		})
	}
}

func TestRecordedReadsTheClustersEntryOfSelectedTargets(t *testing.T) {
	c := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	target := func(name string, states map[string]v1alpha1.TargetClusterState) *v1alpha1.Target {
		return &v1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1alpha1.TargetStatus{ClusterStates: states}}
	}
	sel := selection.Selection{Targets: []selection.SelectedTarget{
		{Target: target("on-2", map[string]v1alpha1.TargetClusterState{"c": {Pod: "c-2"}})},
		{Target: target("away", map[string]v1alpha1.TargetClusterState{"c": {Pod: "c-0", LastPod: "c-1"}})},
		{Target: target("unassigned", map[string]v1alpha1.TargetClusterState{"c": {LastPod: "c-3"}})},
		{Target: target("other-cluster", map[string]v1alpha1.TargetClusterState{"d": {Pod: "d-0"}})},
		{Target: target("foreign-pod", map[string]v1alpha1.TargetClusterState{"c": {Pod: "c-1-0"}})},
		{Target: target("new", nil)},
	}}
	current, last := Recorded(c, sel)
	if want := map[string]int{"on-2": 2, "away": 0}; !reflect.DeepEqual(current, want) {
		t.Errorf("current %v, want %v", current, want)
	}
	if want := map[string]int{"away": 1, "unassigned": 3}; !reflect.DeepEqual(last, want) {
		t.Errorf("last %v, want %v", last, want)
	}
}

func TestSettledOrdinals(t *testing.T) {
	tests := []struct {
		name    string
		spec    v1alpha1.ClusterSpec
		want    []int
		wantErr bool
	}{
		{name: "replicas unset is one pod", want: []int{0}},
		{name: "replicas 3 are ordinals 0 to 2", spec: v1alpha1.ClusterSpec{Replicas: ptr.To[int32](3)}, want: []int{0, 1, 2}},
		{name: "replicas 0 are none", spec: v1alpha1.ClusterSpec{Replicas: ptr.To[int32](0)}, want: []int{}},
		{
			name: "domains split the replicas evenly, numbered per domain",
			spec: v1alpha1.ClusterSpec{Replicas: ptr.To[int32](3),
				Domains: []v1alpha1.ClusterDomain{{Name: "a"}, {Name: "b"}}},
			want: []int{domains.Slot(0, 0), domains.Slot(0, 1), domains.Slot(1, 0)},
		},
		{
			name: "a domain's maximum sends the rest to the others",
			spec: v1alpha1.ClusterSpec{Replicas: ptr.To[int32](3),
				Domains: []v1alpha1.ClusterDomain{{Name: "a", MaxReplicas: ptr.To[int32](0)}, {Name: "b"}}},
			want: []int{domains.Slot(1, 0), domains.Slot(1, 1), domains.Slot(1, 2)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SettledOrdinals(&v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: tt.spec})
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ordinals %v, want %v", got, tt.want)
			}
		})
	}
}
