package sharding

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// A Cluster whose recorded owner has no Lease (an earlier install's replica, a Lease deleted by hand) is taken
// over once no Lease of that owner has been seen for a whole Lease duration; before that the owner may be a
// member whose Lease this replica has not been told of yet, so it waits. Without this such a Cluster was
// never reconciled again.
func TestAMemberTakesOverAClusterWhoseOwnerHasNoLeaseAfterALeaseDuration(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newMember(Options{Identity: "self", LeaseDuration: 6 * time.Second, Now: func() time.Time { return now }}, nil, nil)
	s.leasesSynced = true
	s.self = shard.Lease{Holder: "self", RenewTime: now, Duration: 6 * time.Second}
	cluster := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	cluster.Status.Shard = &operatorv1alpha1.ClusterShard{Owner: "gone", Generation: 4}
	s.desired["ns/c"] = "self"

	steps := []struct {
		name  string
		apply func()
		want  shard.Action
	}{
		{"first seen without a Lease", func() {}, shard.Wait},
		{"unseen for less than a Lease duration", func() { now = now.Add(5 * time.Second) }, shard.Wait},
		{"its Lease shows up, renewed", func() { s.observe(memberLease("gone", now, nil)) }, shard.Wait},
		{"the Lease is deleted", func() { s.forgetLease(memberLease("gone", now, nil)); now = now.Add(time.Second) }, shard.Wait},
		{"unseen again, not yet for a Lease duration", func() { now = now.Add(5 * time.Second) }, shard.Wait},
		{"unseen for a Lease duration", func() { now = now.Add(time.Second) }, shard.TakeOver},
	}
	for _, step := range steps {
		step.apply()
		s.self.RenewTime = now
		action, _, release := s.decideAndHold(cluster)
		release()
		if action != step.want {
			t.Errorf("%s: %v, want %v", step.name, action, step.want)
		}
	}
}
