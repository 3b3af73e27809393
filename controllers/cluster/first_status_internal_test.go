package cluster

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestFirstStatusWaitsFromWhenThisProcessFirstFoundTheTargetOnItsWay(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	// The Target is a year old: its age does not matter, only when this process first found it on its way.
	target := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: "r1", UID: "u1",
		CreationTimestamp: metav1.NewTime(now.AddDate(-1, 0, 0))}}
	noPod := operatorv1alpha1.TargetClusterState{State: operatorv1alpha1.TargetUnassigned, Message: noPodReady}
	sent := operatorv1alpha1.TargetClusterState{Pod: "c-0", State: operatorv1alpha1.TargetPending, Message: notStartedYet}
	starting := operatorv1alpha1.TargetClusterState{Pod: "c-0", State: operatorv1alpha1.TargetAssigned, Message: "starting"}
	handedOver := operatorv1alpha1.TargetClusterState{Pod: "c-1", State: operatorv1alpha1.TargetPending,
		Message: waitingForPreviousPod}
	collecting := operatorv1alpha1.TargetClusterState{Pod: "c-0", State: operatorv1alpha1.TargetAssigned, Collecting: true}
	full := operatorv1alpha1.TargetClusterState{State: operatorv1alpha1.TargetUnassigned, Message: "every collector pod is at capacity"}
	unreachable := operatorv1alpha1.TargetClusterState{Pod: "c-0", State: operatorv1alpha1.TargetPending,
		Message: "its collector pod cannot be reached"}
	for _, tc := range []struct {
		name     string
		seen     map[string]seenAt
		want     operatorv1alpha1.TargetClusterState
		wait     bool
		due      time.Time
		recorded time.Time // the zero time: nothing recorded
	}{
		{"no pod ready, first found now", nil, noPod, true, now.Add(firstStatusWait), now},
		{"sent, found on its way 4 s ago", map[string]seenAt{"r1": {uid: "u1", at: now.Add(-4 * time.Second)}}, sent, true,
			now.Add(6 * time.Second), now.Add(-4 * time.Second)},
		{"starting, found on its way 10 s ago", map[string]seenAt{"r1": {uid: "u1", at: now.Add(-firstStatusWait)}}, starting,
			false, now, now.Add(-firstStatusWait)},
		{"a Target made again under the same name starts over",
			map[string]seenAt{"r1": {uid: "u0", at: now.Add(-time.Minute)}}, sent, true, now.Add(firstStatusWait), now},
		{"handed to a pod that became ready after the first took it, found on its way 2 s ago",
			map[string]seenAt{"r1": {uid: "u1", at: now.Add(-2 * time.Second)}}, handedOver, true,
			now.Add(8 * time.Second), now.Add(-2 * time.Second)},
		{"collecting", nil, collecting, false, time.Time{}, time.Time{}},
		{"every pod full", nil, full, false, time.Time{}, time.Time{}},
		{"its pod unreachable", map[string]seenAt{}, unreachable, false, time.Time{}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]seenAt{}
			for k, v := range tc.seen {
				seen[k] = v
			}
			due, wait := trackFirstStatusWait(seen, target, tc.want, now)
			if wait != tc.wait || !due.Equal(tc.due) {
				t.Errorf("trackFirstStatusWait = %v, %v; want %v, %v", due, wait, tc.due, tc.wait)
			}
			got, ok := seen["r1"]
			switch {
			case tc.recorded.IsZero() && ok && tc.seen == nil:
				t.Errorf("recorded %v for a Target not on its way", got)
			case !tc.recorded.IsZero() && (!got.at.Equal(tc.recorded) || got.uid != types.UID("u1")):
				t.Errorf("recorded %v; want u1 at %v", got, tc.recorded)
			}
		})
	}
}
