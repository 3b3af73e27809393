package sharding

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// The assignment rounds: each round's assignment over the live members, the takeovers it writes, and the share
// this replica caches (leases.go keeps the Leases; decisions.go answers for one Cluster between rounds).

// reassign assigns every Cluster over the live members and wakes those whose decision changed for this
// replica, or that it must act on (take over or drain).
func (s *Member) reassign(ctx context.Context) {
	var clusters operatorv1alpha1.ClusterList
	// Read only (the wakes carry the Clusters only to name them): the cache's objects need no copy.
	if err := s.clusters.List(ctx, &clusters, client.UnsafeDisableDeepCopy); err != nil {
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
	membersChanged := !slices.Equal(in.Members, s.roundMembers)
	s.roundMembers = in.Members
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
		takingOver := s.takingOver[key] || action == shard.TakeOver
		if !takingOver && (desired == s.Identity || (c.Status.Shard != nil && c.Status.Shard.Owner == s.Identity && !c.Status.Shard.Drained)) {
			share = append(share, types.NamespacedName{Namespace: c.Namespace, Name: c.Name})
		}
		if action == shard.Reconcile {
			owned.clusters++
			owned.targets += int(c.Status.TargetsCount)
			owned.pods += int(c.Status.ReadyReplicas)
		}
		switch {
		case action == shard.TakeOver:
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
	if membersChanged {
		s.notifyMembersChanged()
	}
}

// OnMembersChanged registers f, called after each assignment round whose live members differ from the last
// round's: objects assigned with Assigned (TargetSources) move at once rather than at their next look. f must
// not block.
func (s *Member) OnMembersChanged(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.membersChanged = append(s.membersChanged, f)
}

func (s *Member) notifyMembersChanged() {
	s.mu.Lock()
	listeners := slices.Clone(s.membersChanged)
	s.mu.Unlock()
	for _, f := range listeners {
		f()
	}
}

// shareFollowsLocked is whether the caches follow this round's share now: not while takeovers are being
// written (this round's included), for up to a Lease duration. The takeovers of a leaving or dead member's
// Clusters end those Clusters' stretch without an owner, and the lists that caching the Clusters taken over
// first would start compete with them at kube-apiserver; the round that the last takeover asks for caches
// them all. s.mu must be held.
func (s *Member) shareFollowsLocked(now time.Time) bool {
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
func (s *Member) takeOverAll(ctx context.Context, clusters []*operatorv1alpha1.Cluster) {
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

// wake asks the Cluster reconciler to reconcile c now.
func (s *Member) wake(c *operatorv1alpha1.Cluster) {
	s.wakeCluster(types.NamespacedName{Namespace: c.Namespace, Name: c.Name})
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
func (s *Member) viewLocked(c *operatorv1alpha1.Cluster, desired string) shard.View {
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
