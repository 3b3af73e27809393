package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// The assignment side of Sharding: each round's assignment and the takeovers it writes, the share this
// replica caches, and the decisions the Cluster reconciler asks for (shard_membership.go keeps the Leases).

// reassign assigns every Cluster over the live members and wakes those whose decision changed for this
// replica, or that it must act on (take over or drain).
func (s *Sharding) reassign(ctx context.Context) {
	var clusters operatorv1alpha1.ClusterList
	// Read only (the wakes carry the Clusters only to name them): the cache's objects need no copy.
	if err := s.Clusters.List(ctx, &clusters, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list Clusters to assign")
		return
	}
	now := s.now()
	in := shard.AssignInput{Owners: map[string]string{}}
	byKey := map[string]*operatorv1alpha1.Cluster{}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}.String()
		byKey[key] = c
		in.Clusters = append(in.Clusters, shard.Cluster{Key: key, Cost: clusterCost(c)})
		if c.Status.Shard != nil && c.Status.Shard.Owner != "" {
			in.Owners[key] = c.Status.Shard.Owner
		}
	}
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return
	}
	in.Members = shard.ReadyMembers(s.allLeases(), now)
	assignment := shard.Assign(in)
	var wake []string
	var share []types.NamespacedName
	var takeovers []*operatorv1alpha1.Cluster
	var assigned []types.NamespacedName
	notTakenOver := 0
	owned := shardLoad{}
	for key, c := range byKey {
		desired := assignment.Owners[key]
		was, known := s.desired[key]
		s.desired[key] = desired
		action := shard.Decide(s.viewLocked(c, desired), now)
		if desired == s.Identity {
			assigned = append(assigned, types.NamespacedName{Namespace: c.Namespace, Name: c.Name})
			if action != shard.Reconcile {
				notTakenOver++
			}
		}
		// A Cluster this round takes over joins the share once its takeover is written, and the caches follow
		// the share once every takeover in flight is (shareFollowsLocked): a dead member's takeovers are
		// writes of a few Clusters' status each, and must not queue behind the lists of their objects and
		// Targets at kube-apiserver.
		takingOver := s.takingOver[key] || (action == shard.TakeOver && s.takeOver != nil)
		if !takingOver && (desired == s.Identity || (c.Status.Shard != nil && c.Status.Shard.Owner == s.Identity && !c.Status.Shard.Drained)) {
			share = append(share, types.NamespacedName{Namespace: c.Namespace, Name: c.Name})
		}
		if action == shard.Reconcile {
			owned.clusters++
			owned.targets += int(c.Status.TargetsCount)
			owned.pods += int(c.Status.ReadyReplicas)
		}
		switch {
		case action == shard.TakeOver && s.takeOver != nil:
			if !s.takingOver[key] {
				s.takingOver[key] = true
				s.inflight.Add(1) // leaving waits for it as for a reconcile
				takeovers = append(takeovers, c)
			}
		case !known || was != desired || action == shard.TakeOver || action == shard.Drain:
			wake = append(wake, key)
		}
	}
	for key := range s.desired {
		if _, ok := byKey[key]; !ok {
			delete(s.desired, key)
		}
	}
	named := map[string]bool{}
	for _, owner := range in.Owners {
		named[owner] = true
	}
	for owner := range s.unseen {
		if !named[owner] {
			delete(s.unseen, owner)
		}
	}
	s.recordShareLocked(assigned, notTakenOver)
	setShare := s.shareFollowsLocked(now)
	s.mu.Unlock()
	if s.share != nil && setShare {
		s.share.setShare(share)
	}
	owned.report()
	if len(takeovers) > 0 {
		go s.takeOverAll(ctx, takeovers)
	}
	for _, key := range wake {
		s.wake(byKey[key])
	}
}

// shareFollowsLocked is whether the caches follow this round's share now: not while takeovers are being
// written (this round's included), for up to a Lease duration. The takeovers of a leaving or dead member's
// Clusters end those Clusters' stretch without an owner, and the lists that caching the Clusters taken over
// first would start compete with them at kube-apiserver; the round that the last takeover asks for caches
// them all. s.mu must be held.
func (s *Sharding) shareFollowsLocked(now time.Time) bool {
	if len(s.takingOver) == 0 {
		s.shareHeldBackSince = time.Time{}
		return true
	}
	if s.shareHeldBackSince.IsZero() {
		s.shareHeldBackSince = now
	}
	return now.Sub(s.shareHeldBackSince) >= s.LeaseDuration
}

// takeOverRate bounds the takeovers a round runs at once.
const takeOverRate = 8

// takeOverAll takes the Clusters over, takeOverRate at a time, and wakes each once its takeover is written
// (or failed: its reconcile decides again).
func (s *Sharding) takeOverAll(ctx context.Context, clusters []*operatorv1alpha1.Cluster) {
	slots := make(chan struct{}, takeOverRate)
	var all sync.WaitGroup
	for _, c := range clusters {
		slots <- struct{}{}
		all.Add(1)
		go func() {
			defer func() { <-slots; all.Done() }()
			key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
			if err := s.takeOver(log.IntoContext(ctx, log.FromContext(ctx).WithValues("Cluster", key)), c); err != nil {
				log.FromContext(ctx).Error(err, "take a Cluster over; its reconcile will decide again", "Cluster", key)
			}
			s.mu.Lock()
			delete(s.takingOver, key.String())
			s.mu.Unlock()
			s.inflight.Done()
			s.wake(c)
		}()
	}
	all.Wait()
	s.askForRound() // the round caches the Clusters taken over
}

// wake asks the Cluster controller to reconcile c.
func (s *Sharding) wake(c *operatorv1alpha1.Cluster) {
	select {
	case s.wakes <- event.GenericEvent{Object: c}:
	default: // the queue is full: the next round wakes it again
	}
}

// clusterCost is a Cluster's weight in the assignment: its targets and its pods, at least 1.
func clusterCost(c *operatorv1alpha1.Cluster) int {
	replicas := 1
	if c.Spec.Replicas != nil {
		replicas = int(*c.Spec.Replicas)
	}
	return max(int(c.Status.TargetsCount)+replicas, 1)
}

// viewLocked is what this replica knows of the Cluster for shard.Decide. s.mu must be held.
//
// An owner whose Lease this replica does not hold counts as alive (shard.View.Owner): it may be a member whose
// Lease the watch has not delivered yet. Once no Lease of it has been seen for a whole Lease duration, it
// counts as dead (the clock starts once the watch of the Leases has listed them): a member renews its Lease
// in that time, so the owner is one whose Lease is gone (an earlier install's replica, a Lease deleted by
// hand), and its Clusters would otherwise never be reconciled again.
func (s *Sharding) viewLocked(c *operatorv1alpha1.Cluster, desired string) shard.View {
	v := shard.View{Self: s.self, Desired: desired}
	if s.stopping {
		v.Self.Leaving = true
	}
	if c.Status.Shard == nil {
		return v
	}
	owner := c.Status.Shard.Owner
	v.Cluster = shard.ClusterState{Owner: owner, Generation: c.Status.Shard.Generation, Drained: c.Status.Shard.Drained}
	if o, ok := s.leases[owner]; ok {
		v.Owner = o.lease
		return v
	}
	if owner == "" || owner == s.Identity || !s.leasesSynced {
		return v
	}
	now := s.now()
	since, known := s.unseen[owner]
	if !known {
		s.unseen[owner] = now
	} else if now.Sub(since) >= s.LeaseDuration {
		v.Owner = shard.Lease{Holder: owner, RenewTime: since, Duration: s.LeaseDuration, Dead: true}
	}
	return v
}

// cacheShare makes the reconciler read and watch the objects of this replica's share only: a cache per
// namespace of the Clusters it owns or takes over, which reassign keeps up to date (shard_cache.go).
func (s *Sharding) cacheShare(mgr ctrl.Manager, r *ClusterReconciler) error {
	s.init()
	share, err := newShareCaches(mgr.GetConfig(), mgr.GetHTTPClient(), mgr.GetScheme(), mgr.GetRESTMapper(),
		func(key types.NamespacedName) {
			select {
			case s.wakes <- clusterWake(key):
			default: // the queue is full: the reconcile waiting for the cache looks again (shardWait)
			}
		})
	if err != nil {
		return fmt.Errorf("cache the share: %w", err)
	}
	share.watchNamespaces = s.WatchNamespaces
	if s.ConsolidateAfter > 0 {
		share.consolidateAfter = s.ConsolidateAfter
	}
	if err := mgr.Add(share); err != nil {
		return fmt.Errorf("add the caches of the share: %w", err)
	}
	s.share = share
	r.Client = &shareClient{Client: r.Client, share: share, live: mgr.GetAPIReader()}
	return nil
}

// covers is true when this replica's cache holds the Cluster's objects: only then may it reconcile it.
func (s *Sharding) covers(key types.NamespacedName) bool {
	return s.share == nil || s.share.covers(key)
}

// decide is what this replica may do with the Cluster now, and the generation that decision is for. It
// also counts the reconcile as in flight until done is called, so that leaving waits for it.
func (s *Sharding) decide(c *operatorv1alpha1.Cluster) (action shard.Action, generation int64, done func()) {
	s.init()
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
func (s *Sharding) takesOver(c *operatorv1alpha1.Cluster) bool {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	action, _ := s.decisionLocked(c)
	return action == shard.TakeOver
}

// decisionLocked is shard.Decide for the Cluster as read in c, over the last round's assignment; known is
// false (and the action Wait) when no round has assigned the Cluster yet. s.mu must be held.
func (s *Sharding) decisionLocked(c *operatorv1alpha1.Cluster) (action shard.Action, known bool) {
	desired, known := s.desired[types.NamespacedName{Namespace: c.Namespace, Name: c.Name}.String()]
	if !known {
		return shard.Wait, false
	}
	return shard.Decide(s.viewLocked(c, desired), s.now()), true
}

// newerCluster is the Cluster as the cache holds it once that is newer than the resourceVersion stale (the
// write a takeover conflicted with arrives through the watch); nil when the Cluster is gone or nothing newer
// arrived within takeOverRereadWait.
func (s *Sharding) newerCluster(ctx context.Context, key types.NamespacedName, stale string) (*operatorv1alpha1.Cluster, error) {
	deadline := s.now().Add(takeOverRereadWait)
	for {
		c := &operatorv1alpha1.Cluster{}
		if err := s.Clusters.Get(ctx, key, c); err != nil {
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

// lastAssigned is true when the last assignment round gave the Cluster to this replica, or never saw it:
// the replica that cleans up after a deleted Cluster (its Targets' status).
func (s *Sharding) lastAssigned(key types.NamespacedName) bool {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	desired, known := s.desired[key.String()]
	return !known || desired == s.Identity
}

// Assigned is true when the live members' rendezvous gives key to this replica. It serves objects that have
// no collectors to fence and whose writes are idempotent (Balancers): replicas that briefly disagree on the
// members may both act on one, and compute the same result.
func (s *Sharding) Assigned(key string) bool {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.self.Holder == "" || s.stopping {
		return false
	}
	members := shard.ReadyMembers(s.allLeases(), s.now())
	return shard.Assign(shard.AssignInput{Members: members, Clusters: []shard.Cluster{{Key: key, Cost: 1}}}).Owners[key] == s.Identity
}

// mayPush is the fence before every push round: this replica's Lease is still valid, it is not leaving,
// and the Cluster as last read still names it the owner at the generation its reconcile began with. It
// returns the deadline every push must meet: the end of the Lease.
func (s *Sharding) mayPush(c *operatorv1alpha1.Cluster, generation int64) (time.Time, bool) {
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
func (s *Sharding) noticeHandover(old, updated any) {
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
