package sharding

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func memberLease(holder string, renewed time.Time, annotations map[string]string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: holder, ResourceVersion: renewed.Format(time.RFC3339Nano), Annotations: annotations},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(6)),
			RenewTime: &metav1.MicroTime{Time: renewed}},
	}
}

// kicked drains the round request, if any.
func kicked(s *Member) bool {
	select {
	case <-s.kick:
		return true
	default:
		return false
	}
}

// A change of membership (a member joins, leaves, is marked dead or goes) asks for an assignment round at
// once: waiting for the next tick would add up to a third of the Lease duration to every takeover.
func TestObserveAsksForARoundWhenMembershipChanges(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newMember(Options{Identity: "self", LeaseDuration: 6 * time.Second, Now: func() time.Time { return now }}, nil, nil)

	steps := []struct {
		name  string
		apply func()
		kick  bool
	}{
		{"a member joins", func() { s.observe(memberLease("b", now, nil)) }, true},
		{"it renews", func() { now = now.Add(2 * time.Second); s.observe(memberLease("b", now, nil)) }, false},
		{"it renews again", func() { now = now.Add(2 * time.Second); s.observe(memberLease("b", now, nil)) }, false},
		{"it is leaving", func() {
			s.observe(memberLease("b", now, map[string]string{shardLeavingAnnotation: "true"}))
		}, true},
		{"another is marked dead", func() {
			s.observe(memberLease("c", now, nil))
			kicked(s)
			s.observe(memberLease("c", now, map[string]string{shardDeadAnnotation: "true"}))
		}, true},
		{"its Lease is deleted", func() { s.forgetLease(memberLease("c", now, nil)) }, true},
		{"a tombstone of a deleted Lease", func() {
			s.observe(memberLease("d", now, nil))
			kicked(s)
			s.forgetLease(cache.DeletedFinalStateUnknown{Key: "d", Obj: memberLease("d", now, nil)})
		}, true},
		{"its own Lease", func() { s.observe(memberLease("self", now, nil)) }, false},
	}
	for _, step := range steps {
		step.apply()
		if got := kicked(s); got != step.kick {
			t.Errorf("%s: asked for a round %v, want %v", step.name, got, step.kick)
		}
	}
}

// A drain, a takeover or a release of a Cluster asks for a round at once: the round writes the takeover of a
// drained Cluster, which the Cluster's reconciles (they follow its generation only) would not see.
func TestNoticeHandoverAsksForARoundWhenAClustersOwnershipChanges(t *testing.T) {
	owned := func(owner string, generation int64, drained bool) *operatorv1alpha1.Cluster {
		c := &operatorv1alpha1.Cluster{}
		if owner != "" {
			c.Status.Shard = &operatorv1alpha1.ClusterShard{Owner: owner, Generation: generation, Drained: drained}
		}
		c.Status.TargetsCount = 3
		return c
	}
	statusOnly := owned("a", 1, false)
	statusOnly.Status.TargetsCount = 4
	for _, tc := range []struct {
		name     string
		old, new *operatorv1alpha1.Cluster
		want     bool
	}{
		{"drained", owned("a", 1, false), owned("a", 1, true), true},
		{"taken over", owned("a", 1, true), owned("b", 2, false), true},
		{"taken back at a new generation", owned("a", 1, true), owned("a", 2, false), true},
		{"first owner", owned("", 0, false), owned("a", 1, false), true},
		{"another status field", owned("a", 1, false), statusOnly, false},
		{"unowned still", owned("", 0, false), owned("", 0, false), false},
	} {
		s := newMember(Options{}, nil, nil)
		s.noticeHandover(tc.old, tc.new)
		if got := kicked(s); got != tc.want {
			t.Errorf("%s: asked for a round %v, want %v", tc.name, got, tc.want)
		}
	}
}
