package sharding

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// While a round's takeovers are written, the caches keep the share they had: the lists that caching the
// Clusters taken over first would start compete at kube-apiserver with the writes that end the others'
// stretch without an owner. They follow once the takeovers are written, or after a Lease duration.
func TestReassignHoldsTheCachesShareBackWhileTakeoversAreWritten(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cluster := func(name, owner string) operatorv1alpha1.Cluster {
		c := operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "c", ResourceVersion: "1"}}
		c.Status.Shard = &operatorv1alpha1.ClusterShard{Owner: owner, Generation: 1}
		return c
	}
	release := make(chan struct{})
	s := newMember(Options{Identity: "self", LeaseDuration: 6 * time.Second, Now: func() time.Time { return now }}, nil,
		store{clusters: []operatorv1alpha1.Cluster{cluster("mine", "self"), cluster("theirs", "gone")}})
	s.takeOver = func(context.Context, *operatorv1alpha1.Cluster) error { <-release; return nil }
	s.share = testShareCaches(t)
	s.leasesSynced = true
	s.self = shard.Lease{Holder: "self", RenewTime: now, Duration: 6 * time.Second}
	s.observe(memberLease("gone", now, map[string]string{shardDeadAnnotation: "true"}))
	shareOf := func() map[string][]string {
		s.share.mu.Lock()
		defer s.share.mu.Unlock()
		return s.share.want
	}

	s.reassign(context.Background()) // starts the takeover of theirs/c, which waits for release
	if got := shareOf(); len(got) != 0 {
		t.Fatalf("the caches followed the share %v while a takeover was being written", got)
	}
	now = now.Add(2 * time.Second)
	s.reassign(context.Background())
	if got := shareOf(); len(got) != 0 {
		t.Fatalf("the caches followed the share %v while a takeover was being written", got)
	}
	now = now.Add(4 * time.Second)
	s.reassign(context.Background())
	if got := shareOf(); len(got["mine"]) != 1 {
		t.Fatalf("share %v a Lease duration into the takeovers, want mine/c held", got)
	}

	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		writing := len(s.takingOver)
		s.mu.Unlock()
		if writing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the takeover never finished")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	heldBack := !s.shareHeldBackSince.IsZero()
	s.mu.Unlock()
	if !heldBack {
		t.Fatal("the hold was forgotten before a round saw the takeovers written")
	}
	s.reassign(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.shareHeldBackSince.IsZero() {
		t.Fatal("the round after the takeovers still holds the share back")
	}
}
