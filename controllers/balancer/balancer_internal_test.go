package balancer

import (
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/balance"
)

var balancerEpoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func afterEpoch(seconds int) metav1.Time {
	return metav1.NewTime(balancerEpoch.Add(time.Duration(seconds) * time.Second))
}

func testPod(created int, zone string, phase corev1.PodPhase, ready *metav1.Time, readyStatus corev1.ConditionStatus) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: afterEpoch(created), Labels: map[string]string{"app": "c", "zone": zone}},
		Status: corev1.PodStatus{Phase: phase}}
	if ready != nil {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: readyStatus, LastTransitionTime: *ready}}
	}
	return p
}

func TestCountPodsSaysWhichStartedAndSinceWhenTheOthersWait(t *testing.T) {
	deleted := metav1.NewTime(balancerEpoch)
	terminating := testPod(0, "a", corev1.PodRunning, ptr.To(afterEpoch(1)), corev1.ConditionTrue)
	terminating.DeletionTimestamp = &deleted
	pods := []corev1.Pod{
		testPod(0, "a", corev1.PodRunning, ptr.To(afterEpoch(5)), corev1.ConditionTrue),    // started
		testPod(10, "a", corev1.PodPending, nil, ""),                                       // unschedulable: waits since creation
		testPod(0, "a", corev1.PodRunning, ptr.To(afterEpoch(30)), corev1.ConditionFalse),  // was ready, waits since it stopped
		testPod(20, "b", corev1.PodRunning, ptr.To(afterEpoch(20)), corev1.ConditionFalse), // starting, not selected by the Balancer
		testPod(0, "a", corev1.PodSucceeded, nil, ""),                                      // finished: not counted
		testPod(0, "a", corev1.PodFailed, nil, ""),                                         // finished: not counted
		terminating, // terminating: not counted
	}
	got := countPods(pods, labels.SelectorFromSet(labels.Set{"zone": "a"}))
	want := podCount{current: 4, ready: 1, notStarted: 3, notStartedSince: balancerEpoch.Add(10 * time.Second), unselected: 1}
	if got != want {
		t.Fatalf("countPods = %+v, want %+v", got, want)
	}
	if w := got.waiting(balancerEpoch.Add(25 * time.Second)); w != 15*time.Second {
		t.Errorf("waiting at +25s = %v, want 15s", w)
	}
	if w := (podCount{current: 1, ready: 1}).waiting(balancerEpoch); w != 0 {
		t.Errorf("waiting without a not-started pod = %v, want 0", w)
	}
}

func TestCommonRequirementsAreWhatEverySelectorHas(t *testing.T) {
	for _, c := range []struct {
		selectors []string
		want      string
	}{
		{[]string{"app=c,zone=a", "app=c,zone=b"}, "app=c"},
		{[]string{"app=c,tier in (x,y),zone=a", "zone=b,tier in (x,y),app=c"}, "app=c,tier in (x,y)"},
		{[]string{"app=c,zone=a"}, "app=c,zone=a"},
		{[]string{"app=c", "app=d"}, ""},
		{[]string{"app=c", ""}, ""}, // a target without a selector: nothing is common
		{nil, ""},
	} {
		if got := commonRequirements(c.selectors); got != c.want {
			t.Errorf("commonRequirements(%q) = %q, want %q", c.selectors, got, c.want)
		}
	}
}

func TestStatusSelectorIsSpecSelectorWhenSet(t *testing.T) {
	targets := []observedTarget{{scale: &autoscalingv1.Scale{Status: autoscalingv1.ScaleStatus{Selector: "app=c,zone=a"}}}}
	got, err := statusSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "collectors"}}, targets)
	if err != nil || got != "app=collectors" {
		t.Errorf("statusSelector with spec.selector = %q, %v; want app=collectors", got, err)
	}
	if got, _ := statusSelector(nil, targets); got != "app=c,zone=a" {
		t.Errorf("statusSelector without spec.selector = %q, want the target's", got)
	}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
	if _, err := statusSelector(bad, targets); err == nil {
		t.Error("an invalid spec.selector must be an error")
	}
}

func testBalancer(policy operatorv1alpha1.BalancerPolicy, targets ...operatorv1alpha1.BalancerTarget) *operatorv1alpha1.Balancer {
	return &operatorv1alpha1.Balancer{Spec: operatorv1alpha1.BalancerSpec{Replicas: ptr.To[int32](6), Targets: targets, Policy: policy}}
}

func TestBalanceInputLeavesOutTheTargetsLeftAlone(t *testing.T) {
	b := testBalancer(operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerPriority,
		Priorities: &operatorv1alpha1.PriorityPolicy{TargetOrder: []string{"gone", "spot", "on-demand"}},
		Fallback:   &operatorv1alpha1.BalancerFallback{StartupTimeout: metav1.Duration{Duration: time.Minute}}},
		operatorv1alpha1.BalancerTarget{Name: "on-demand", MinReplicas: ptr.To[int32](1)},
		operatorv1alpha1.BalancerTarget{Name: "spot", MaxReplicas: ptr.To[int32](4)},
		operatorv1alpha1.BalancerTarget{Name: "gone"})
	scale := &autoscalingv1.Scale{}
	targets := []observedTarget{
		{spec: b.Spec.Targets[0], scale: scale, pods: podCount{current: 1, ready: 1}},
		{spec: b.Spec.Targets[1], scale: scale, pods: podCount{current: 4, ready: 2, notStarted: 2, notStartedSince: balancerEpoch}},
		{spec: b.Spec.Targets[2], problem: &targetProblem{operatorv1alpha1.ReasonTargetMissing, "not found"}},
	}
	in := balanceInput(b, targets, balancerEpoch.Add(90*time.Second))
	want := balance.Input{Replicas: 6, Policy: balance.Priority, Order: []string{"spot", "on-demand"}, StartupTimeout: time.Minute,
		Targets: []balance.Target{
			{Name: "on-demand", Min: 1, Started: 1},
			{Name: "spot", Max: ptr.To(4), Started: 2, NotStarted: 2, Waiting: 90 * time.Second},
		}}
	if len(in.Targets) != 2 || *in.Targets[1].Max != 4 {
		t.Fatalf("balanceInput targets = %+v", in.Targets)
	}
	in.Targets[1].Max, want.Targets[1].Max = nil, nil
	if !equalInputs(in, want) {
		t.Errorf("balanceInput = %+v, want %+v", in, want)
	}

	plan := decide(b, targets, balancerEpoch.Add(90*time.Second))
	if plan.err != nil {
		t.Fatal(plan.err)
	}
	// spot is blocked (its pods waited 90s > 1m): it keeps its 4 and on-demand takes the 2 that did not start.
	if got := plan.allocations["spot"]; got.Desired != 4 || !got.Blocked {
		t.Errorf("spot = %+v, want 4 and blocked", got)
	}
	if got := plan.allocations["on-demand"]; got.Desired != 4 || got.Replacements != 2 {
		t.Errorf("on-demand = %+v, want 4 with 2 replacements", got)
	}
}

func equalInputs(a, b balance.Input) bool {
	if a.Replicas != b.Replicas || a.Policy != b.Policy || a.StartupTimeout != b.StartupTimeout || len(a.Order) != len(b.Order) ||
		len(a.Targets) != len(b.Targets) {
		return false
	}
	for i := range a.Order {
		if a.Order[i] != b.Order[i] {
			return false
		}
	}
	for i := range a.Targets {
		if a.Targets[i] != b.Targets[i] {
			return false
		}
	}
	return true
}

func TestNextBalancerLookIsWhenAStartupTimeoutEnds(t *testing.T) {
	fallback := &operatorv1alpha1.BalancerFallback{StartupTimeout: metav1.Duration{Duration: 30 * time.Second}}
	waiting := observedTarget{spec: operatorv1alpha1.BalancerTarget{Name: "b"}, scale: &autoscalingv1.Scale{},
		pods: podCount{notStarted: 1, notStartedSince: balancerEpoch}}
	now := balancerEpoch.Add(25 * time.Second)
	plan := balancerPlan{allocations: map[string]balance.Allocation{}}
	for _, c := range []struct {
		name     string
		fallback *operatorv1alpha1.BalancerFallback
		targets  []observedTarget
		plan     balancerPlan
		wrote    bool
		want     time.Duration
	}{
		{"nothing waits: the period", fallback, nil, plan, false, 10 * time.Second},
		{"a write: soon", fallback, nil, plan, true, settleLook},
		{"a pod waits: when its timeout ends", fallback, []observedTarget{waiting}, plan, false, 5*time.Second + expiryMargin},
		{"without fallback nothing ends", nil, []observedTarget{waiting}, plan, false, 10 * time.Second},
		{"a blocked target: the period", fallback, []observedTarget{waiting},
			balancerPlan{allocations: map[string]balance.Allocation{"b": {Blocked: true}}}, false, 10 * time.Second},
	} {
		if got := nextBalancerLook(10*time.Second, c.fallback, c.targets, c.plan, c.wrote, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestConditionsSayWhyReplicasAreNotPlaced(t *testing.T) {
	b := testBalancer(operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerProportional,
		Proportions: &operatorv1alpha1.ProportionalPolicy{TargetProportions: map[string]int32{"a": 1, "b": 1}}},
		operatorv1alpha1.BalancerTarget{Name: "a", MinReplicas: ptr.To[int32](4)},
		operatorv1alpha1.BalancerTarget{Name: "b", MinReplicas: ptr.To[int32](4)})
	targets := []observedTarget{{spec: b.Spec.Targets[0], scale: &autoscalingv1.Scale{}}, {spec: b.Spec.Targets[1], scale: &autoscalingv1.Scale{}}}
	st := balancerStatus(b, targets, decide(b, targets, balancerEpoch))
	placed := findCondition(st.Conditions, operatorv1alpha1.ConditionReplicasPlaced)
	if placed.Status != metav1.ConditionFalse || placed.Reason != operatorv1alpha1.ReasonMinReplicasExceedReplicas {
		t.Errorf("ReplicasPlaced = %+v, want False MinReplicasExceedReplicas", placed)
	}
	if c := findCondition(st.Conditions, operatorv1alpha1.ConditionFallbackActive); c.Reason != operatorv1alpha1.ReasonFallbackOff {
		t.Errorf("FallbackActive = %+v, want FallbackOff", c)
	}

	b.Spec.Targets[0].MinReplicas, b.Spec.Targets[1].MinReplicas = nil, nil
	b.Spec.Targets[0].MaxReplicas, b.Spec.Targets[1].MaxReplicas = ptr.To[int32](2), ptr.To[int32](2)
	targets = []observedTarget{{spec: b.Spec.Targets[0], scale: &autoscalingv1.Scale{}}, {spec: b.Spec.Targets[1], scale: &autoscalingv1.Scale{}}}
	st = balancerStatus(b, targets, decide(b, targets, balancerEpoch))
	placed = findCondition(st.Conditions, operatorv1alpha1.ConditionReplicasPlaced)
	if placed.Status != metav1.ConditionFalse || placed.Reason != operatorv1alpha1.ReasonMaxReplicasReached {
		t.Errorf("ReplicasPlaced = %+v, want False MaxReplicasReached", placed)
	}
	if st.Targets[0].Desired == nil || *st.Targets[0].Desired != 2 || len(st.Targets[0].Reasons) == 0 {
		t.Errorf("target a = %+v, want desired 2 with the reason", st.Targets[0])
	}
}

func TestAPolicyWithoutPolicyNameWritesNothingAndSaysToApplyTheKEPNames(t *testing.T) {
	// What a Balancer stored with policy.name and policy.priority holds once the API server prunes them.
	b := testBalancer(operatorv1alpha1.BalancerPolicy{},
		operatorv1alpha1.BalancerTarget{Name: "a"}, operatorv1alpha1.BalancerTarget{Name: "b"})
	targets := []observedTarget{{spec: b.Spec.Targets[0], scale: &autoscalingv1.Scale{}}, {spec: b.Spec.Targets[1], scale: &autoscalingv1.Scale{}}}
	plan := decide(b, targets, balancerEpoch)
	if len(plan.allocations) != 0 {
		t.Errorf("allocations = %v, want none: nothing is written", plan.allocations)
	}
	balanced := findCondition(balancerStatus(b, targets, plan).Conditions, operatorv1alpha1.ConditionBalanced)
	if balanced.Status != metav1.ConditionFalse || balanced.Reason != operatorv1alpha1.ReasonCannotBalance ||
		!strings.Contains(balanced.Message, "policyName, priorities and proportions") {
		t.Errorf("Balanced = %+v, want False CannotBalance naming the new field names", balanced)
	}
}

func findCondition(conditions []metav1.Condition, conditionType string) metav1.Condition {
	for _, c := range conditions {
		if c.Type == conditionType {
			return c
		}
	}
	return metav1.Condition{}
}
