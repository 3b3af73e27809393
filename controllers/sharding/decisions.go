package sharding

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// Decisions for one Cluster between rounds, over the last round's assignment: what this replica may do with
// it (decideAndHold, takesOver), whether it may push to its collectors (mayPush), whether it cleans up after
// it, and which replica runs an object that needs no fence (Assigned).

// Covers is true when this replica's caches hold the Cluster's objects and its namespace's Targets: only then
// does it reconcile the Cluster.
func (s *Member) Covers(key types.NamespacedName) bool {
	return s.share == nil || s.share.covers(key)
}

// decideAndHold is what this replica may do with the Cluster now, and the generation that decision is for; it
// holds the decision in flight until release is called, so that leaving waits for what it leads to. Deciding
// and holding are one step: leaving must not start between them.
func (s *Member) decideAndHold(c *operatorv1alpha1.Cluster) (action shard.Action, generation int64, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.self.Holder == "" {
		return shard.Wait, 0, func() {}
	}
	action, known := s.decisionLocked(c)
	if !known {
		// A Cluster created since the last round: the next round, asked for now, assigns it with the others.
		s.askForRound()
		return shard.Wait, 0, func() {}
	}
	if c.Status.Shard != nil {
		generation = c.Status.Shard.Generation
	}
	s.inflight.Add(1)
	return action, generation, s.inflight.Done
}

// takesOver is true when this replica, as of the last assignment round, should take the Cluster as read in
// c over now.
func (s *Member) takesOver(c *operatorv1alpha1.Cluster) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	action, _ := s.decisionLocked(c)
	return action == shard.TakeOver
}

// decisionLocked is shard.Decide for the Cluster as read in c, over the last round's assignment; known is
// false (and the action Wait) when no round has assigned the Cluster yet. s.mu must be held.
func (s *Member) decisionLocked(c *operatorv1alpha1.Cluster) (action shard.Action, known bool) {
	desired, known := s.desired[types.NamespacedName{Namespace: c.Namespace, Name: c.Name}.String()]
	if !known {
		return shard.Wait, false
	}
	return shard.Decide(s.viewLocked(c, desired), s.now()), true
}

// newerCluster is the Cluster as the cache holds it once that is newer than the resourceVersion stale (the
// write a takeover conflicted with arrives through the watch); nil when the Cluster is gone or nothing newer
// arrived within takeOverRereadWait.
func (s *Member) newerCluster(ctx context.Context, key types.NamespacedName, stale string) (*operatorv1alpha1.Cluster, error) {
	deadline := s.now().Add(takeOverRereadWait)
	for {
		c := &operatorv1alpha1.Cluster{}
		if err := s.clusters.Get(ctx, key, c); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		if c.ResourceVersion != stale {
			return c, nil
		}
		if s.now().After(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// CleansUp is true when this replica cleans up after the deleted Cluster (its entries in other objects'
// status): the last assignment round gave the Cluster to it, or never saw the Cluster.
func (s *Member) CleansUp(key types.NamespacedName) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	desired, known := s.desired[key.String()]
	return !known || desired == s.Identity
}

// Assigned is true when the live members' rendezvous gives key to this replica. It serves objects that have
// no collectors to fence and whose writes are idempotent (Balancers): replicas that briefly disagree on the
// members may both act on one, and compute the same result.
func (s *Member) Assigned(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.self.Holder == "" || s.stopping {
		return false
	}
	members := shard.ReadyMembers(s.allLeases(), s.now())
	return shard.Assign(shard.AssignInput{Members: members, Clusters: []shard.Cluster{{Key: key, Cost: 1}}}).Owners[key] == s.Identity
}

// MemberName is this replica's member name (Identity).
func (s *Member) MemberName() string { return s.Identity }

// MemberRunning is true when the named member's Lease, as this replica sees it, is Ready or Draining: a
// process that may be in the middle of work it started. An expired or dead member's is false. A member whose
// Lease this replica does not hold counts as running until a Lease duration after it was first asked about
// (before the watch of the Leases listed them all, for ever): its Lease may not have reached this replica yet.
func (s *Member) MemberRunning(member string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	lease := s.self
	if member != s.Identity {
		o, ok := s.leases[member]
		if !ok {
			return s.unseenMemberRunningLocked(member, now)
		}
		lease = o.lease
	}
	if lease.Holder != member {
		return false
	}
	state := lease.State(now)
	return state == shard.Ready || state == shard.Draining
}

// unseenMemberRunningLocked is MemberRunning for a member without a Lease here. Forgetting rule: a member is
// forgotten a Lease duration after it counted as stopped, or when its Lease shows up. s.mu must be held.
func (s *Member) unseenMemberRunningLocked(member string, now time.Time) bool {
	if !s.leasesSynced {
		return true
	}
	for m, since := range s.unseenMembers {
		if now.Sub(since) >= 2*s.LeaseDuration {
			delete(s.unseenMembers, m)
		}
	}
	since, known := s.unseenMembers[member]
	if !known {
		s.unseenMembers[member] = now
		return true
	}
	return now.Sub(since) < s.LeaseDuration
}

// mayPush is the fence before every push round: this replica's Lease is still valid, it is not leaving,
// and the Cluster as last read still names it the owner at the generation its reconcile began with. It
// returns the deadline every push must meet: the end of the Lease.
func (s *Member) mayPush(c *operatorv1alpha1.Cluster, generation int64) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping || s.self.State(s.now()) != shard.Ready || c.Status.Shard == nil {
		return time.Time{}, false
	}
	state := shard.ClusterState{Owner: c.Status.Shard.Owner, Generation: c.Status.Shard.Generation, Drained: c.Status.Shard.Drained}
	if !state.MayPush(s.Identity, generation) {
		return time.Time{}, false
	}
	return s.self.Expiry(), true
}

// noticeHandover asks for an assignment round when a Cluster's ownership changed (an owner drained it, took
// it over, or let it go): a drained Cluster is then taken over by the round's takeovers at once, not at the
// next renewal tick or behind the reconciles queued at a replica that is starting. It is an update handler of
// the manager's Cluster informer.
func (s *Member) noticeHandover(old, updated any) {
	was, okOld := old.(*operatorv1alpha1.Cluster)
	now, okNew := updated.(*operatorv1alpha1.Cluster)
	if okOld && okNew && ownershipChanged(was.Status.Shard, now.Status.Shard) {
		s.askForRound()
	}
}

// ownershipChanged is true when the owner, its generation or the drain differ between two shard statuses.
func ownershipChanged(was, now *operatorv1alpha1.ClusterShard) bool {
	if was == nil || now == nil {
		return (was == nil) != (now == nil)
	}
	return was.Owner != now.Owner || was.Generation != now.Generation || was.Drained != now.Drained
}
