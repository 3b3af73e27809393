package sharding

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestShareHeldOnlyOnceEveryAssignedClusterIsTakenOverAndCached(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		rounds, assigned, pending, uncached int
		want                                string // a part of the error; empty: held
	}{
		{name: "no round yet", want: "no assignment round"},
		{name: "a round gave it nothing", rounds: 1},
		{name: "all taken over and cached", rounds: 3, assigned: 5},
		{name: "some still owned by others", rounds: 2, assigned: 5, pending: 2, want: "2 of the 5 Clusters assigned to this replica are not taken over"},
		{name: "taken over, not all cached", rounds: 2, assigned: 5, uncached: 1, want: "1 of the 5 Clusters assigned to this replica are not cached"},
		{name: "neither", rounds: 2, assigned: 5, pending: 1, uncached: 3, want: "not taken over"},
	} {
		err := shareHeld(tc.rounds, tc.assigned, tc.pending, tc.uncached)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want held", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// A replica becomes ready once it holds its share, and stays ready when it later takes more over (every
// replica serves the metrics API); one that cannot hold its share becomes ready after ReadyWithin, so that a
// rollout goes on.
func TestHoldsShareLatchesOnceTheShareIsHeldOrReadyWithinPassed(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	newReplica := func() *Member {
		s := newMember(Options{Identity: "self", ReadyWithin: time.Minute, Now: func() time.Time { return now }}, nil, nil)
		s.share = testShareCaches(t)
		s.share.segments = []*shareCache{{clusters: []string{"x"}, keys: []string{"a/x"}}}
		s.share.namespaces["a"] = &namespaceTargets{synced: true}
		return s
	}
	x, y := types.NamespacedName{Namespace: "a", Name: "x"}, types.NamespacedName{Namespace: "b", Name: "y"}

	s := newReplica()
	if err := s.HoldsShare(nil); err == nil {
		t.Fatal("ready before joining")
	}
	s.joined = now
	if err := s.HoldsShare(nil); err == nil {
		t.Fatal("ready before any assignment round")
	}
	s.recordShareLocked([]types.NamespacedName{x, y}, 1)
	if err := s.HoldsShare(nil); err == nil || !strings.Contains(err.Error(), "not taken over") {
		t.Fatalf("ready with a Cluster not taken over: %v", err)
	}
	s.recordShareLocked([]types.NamespacedName{x, y}, 0)
	if err := s.HoldsShare(nil); err == nil || !strings.Contains(err.Error(), "1 of the 2 Clusters assigned to this replica are not cached") {
		t.Fatalf("ready with a Cluster not cached: %v", err)
	}
	s.recordShareLocked([]types.NamespacedName{x}, 0)
	if err := s.HoldsShare(nil); err != nil {
		t.Fatalf("not ready holding its whole share: %v", err)
	}
	s.recordShareLocked([]types.NamespacedName{x, y}, 1) // a dead member's Clusters come its way
	if err := s.HoldsShare(nil); err != nil {
		t.Fatalf("no longer ready while taking more over: %v", err)
	}

	s = newReplica()
	s.joined = now
	s.recordShareLocked([]types.NamespacedName{x, y}, 0)
	now = now.Add(59 * time.Second)
	if err := s.HoldsShare(nil); err == nil {
		t.Fatal("ready before ReadyWithin without holding its share")
	}
	now = now.Add(time.Second)
	if err := s.HoldsShare(nil); err != nil {
		t.Fatalf("not ready ReadyWithin after joining: %v", err)
	}
}
