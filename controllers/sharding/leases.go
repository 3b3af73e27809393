package sharding

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// The member Leases: this replica's own (join, renew, leave) and the others' as its watch sees them (observe,
// forgetLease), and the marking of expired members dead.

// join creates this process's Lease; its identity is new, so none exists.
func (s *Member) join(ctx context.Context) error {
	sent := s.now()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.Identity, Namespace: s.Namespace,
			Labels: map[string]string{MemberLabel: "true", "app.kubernetes.io/name": "gnmic-operator"},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(s.Identity),
			LeaseDurationSeconds: ptr.To(int32(s.LeaseDuration / time.Second)),
			AcquireTime:          &metav1.MicroTime{Time: sent},
			RenewTime:            &metav1.MicroTime{Time: sent},
		},
	}
	if s.Pod != "" {
		lease.Annotations = map[string]string{shardPodAnnotation: s.Pod}
	}
	created, err := s.leaseClient.CoordinationV1().Leases(s.Namespace).Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create member lease %s/%s: %w", s.Namespace, s.Identity, err)
	}
	s.mu.Lock()
	s.self = shard.Lease{Holder: s.Identity, RenewTime: sent, Duration: s.LeaseDuration}
	s.written = created
	s.joined = s.now()
	s.mu.Unlock()
	return nil
}

// renew extends this process's Lease. The renewal counts from when it was sent, so that a slow answer only
// shortens this replica's own view of its Lease. A Lease marked dead means the others took its Clusters: the
// process must end and come back under a new identity.
func (s *Member) renew(ctx context.Context) error {
	leases := s.leaseClient.CoordinationV1().Leases(s.Namespace)
	s.mu.Lock()
	current := s.written.DeepCopy()
	s.mu.Unlock()
	sent := s.now()
	if current != nil {
		// Conditional on the version this replica wrote last: whoever changed the Lease since (marked it dead)
		// makes the update fail, and the Lease is read.
		current.Spec.RenewTime = &metav1.MicroTime{Time: sent}
		updated, err := leases.Update(ctx, current, metav1.UpdateOptions{})
		if err == nil {
			s.renewed(updated, sent)
			return nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			log.FromContext(ctx).Error(err, "renew own member lease; will retry")
			return nil
		}
	}
	current, err := leases.Get(ctx, s.Identity, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		log.FromContext(ctx).Error(err, "read own member lease; will retry")
		return nil
	}
	// A Lease deleted is one marked dead whose Clusters were all taken over since.
	if apierrors.IsNotFound(err) || current.Annotations[shardDeadAnnotation] == "true" {
		return fmt.Errorf("member lease %s/%s was marked dead by another replica: this replica was paused or "+
			"cut off for longer than %s and its Clusters were taken over; restarting under a new identity",
			s.Namespace, s.Identity, s.LeaseDuration)
	}
	current.Spec.RenewTime = &metav1.MicroTime{Time: sent}
	updated, err := leases.Update(ctx, current, metav1.UpdateOptions{})
	if err != nil {
		log.FromContext(ctx).Error(err, "renew own member lease; will retry")
		return nil
	}
	s.renewed(updated, sent)
	return nil
}

// renewed records a successful renewal sent at sent.
func (s *Member) renewed(updated *coordinationv1.Lease, sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.self.RenewTime = sent
	s.written = updated
}

// observe records another member's Lease, with the time this replica saw it change.
func (s *Member) observe(obj any) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == s.Identity {
		return
	}
	written := fmt.Sprint(l.Spec.RenewTime, l.Annotations[shardLeavingAnnotation], l.Annotations[shardDeadAnnotation])
	duration := s.LeaseDuration
	if l.Spec.LeaseDurationSeconds != nil {
		duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	holder := *l.Spec.HolderIdentity
	leaving, dead := l.Annotations[shardLeavingAnnotation] == "true", l.Annotations[shardDeadAnnotation] == "true"
	s.mu.Lock()
	was, known := s.leases[holder]
	seen := was.lease.RenewTime
	if !known || was.written != written {
		seen = s.now()
	}
	delete(s.unseen, holder)
	delete(s.unseenMembers, holder)
	s.leases[holder] = observedLease{
		lease: shard.Lease{Holder: holder, RenewTime: seen, Duration: duration, Leaving: leaving, Dead: dead},
		name:  l.Name, rv: l.ResourceVersion, object: l, written: written,
	}
	s.mu.Unlock()
	if !known || was.lease.Leaving != leaving || was.lease.Dead != dead {
		s.askForRound() // the members changed: their Clusters move now, not at the next tick
	}
}

// askForRound asks the membership loop for an assignment round before its next tick.
func (s *Member) askForRound() {
	select {
	case s.kick <- struct{}{}:
	default: // one is already asked for
	}
}

func (s *Member) forgetLease(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || l.Spec.HolderIdentity == nil {
		return
	}
	s.mu.Lock()
	delete(s.leases, *l.Spec.HolderIdentity)
	s.mu.Unlock()
	s.askForRound()
}

// allLeases are every member's Lease as this replica knows them, its own included.
func (s *Member) allLeases() []shard.Lease {
	out := []shard.Lease{s.self}
	for _, o := range s.leases {
		out = append(out, o.lease)
	}
	return out
}

// markExpiredDead marks dead, with a conditional update on the version judged expired, the Leases of members
// that stopped renewing: only then may their Clusters be taken over.
func (s *Member) markExpiredDead(ctx context.Context) {
	s.mu.Lock()
	self := s.self
	var expired []observedLease
	for _, o := range s.leases {
		if shard.MayMarkDead(self, o.lease, s.now()) {
			expired = append(expired, o)
		}
	}
	s.mu.Unlock()
	leases := s.leaseClient.CoordinationV1().Leases(s.Namespace)
	for _, o := range expired {
		// Conditional on the version judged expired: a renewal since makes the update fail (not dead).
		dead := o.object.DeepCopy()
		if dead.Annotations == nil {
			dead.Annotations = map[string]string{}
		}
		dead.Annotations[shardDeadAnnotation] = "true"
		if updated, err := leases.Update(ctx, dead, metav1.UpdateOptions{}); err == nil {
			s.observe(updated) // its Clusters move in the round this asks for, before the watch brings the change
			shardHandovers.WithLabelValues("marked_dead").Inc()
			log.FromContext(ctx).Info("marked an expired member dead; its Clusters will be taken over", "deadMember", o.lease.Holder)
		}
	}
}

// MarkPredecessorsDead marks dead, each with a conditional update, the Leases that earlier processes of this
// replica's pod hold (see Pod). The operator calls it before its manager starts, so that the Clusters of the
// process it replaces move while it lists its caches. Failures are logged: those Leases then run out as any
// other.
func (s *Member) MarkPredecessorsDead(ctx context.Context) {
	if s.Pod == "" {
		return
	}
	// Bounded: the operator's start waits for it.
	ctx, cancel := context.WithTimeout(ctx, s.LeaseDuration)
	defer cancel()
	leases := s.leaseClient.CoordinationV1().Leases(s.Namespace)
	list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: MemberLabel + "=true"})
	if err != nil {
		log.FromContext(ctx).Error(err, "list member leases to find this pod's earlier processes; their leases run out instead")
		return
	}
	for i := range list.Items {
		l := &list.Items[i]
		if l.Annotations[shardPodAnnotation] != s.Pod || l.Name == s.Identity || l.Annotations[shardDeadAnnotation] == "true" {
			continue
		}
		l.Annotations[shardDeadAnnotation] = "true"
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			log.FromContext(ctx).Error(err, "mark the lease of this pod's earlier process dead; it runs out instead", "lease", l.Name)
			continue
		}
		shardHandovers.WithLabelValues("marked_dead").Inc()
		log.FromContext(ctx).Info("marked the lease of this pod's earlier process dead; its Clusters will be taken over", "deadMember", l.Name)
	}
}

// deleteAbandonedLeases deletes dead Leases that no Cluster names as its owner any more.
func (s *Member) deleteAbandonedLeases(ctx context.Context) {
	var clusters operatorv1alpha1.ClusterList
	// Read only: the cache's objects need no copy.
	if err := s.clusters.List(ctx, &clusters, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	owners := map[string]bool{}
	for _, c := range clusters.Items {
		if c.Status.Shard != nil {
			owners[c.Status.Shard.Owner] = true
		}
	}
	s.mu.Lock()
	var gone []observedLease
	for holder, o := range s.leases {
		if o.lease.Dead && !owners[holder] {
			gone = append(gone, o)
		}
	}
	s.mu.Unlock()
	for _, o := range gone {
		err := s.leaseClient.CoordinationV1().Leases(s.Namespace).Delete(ctx, o.name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To(o.rv)}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			log.FromContext(ctx).Error(err, "delete a dead member lease", "lease", o.name)
		}
	}
}

// leave stops taking reconciles, waits (a bounded time) for those in flight, and releases the Lease.
func (s *Member) leave(logger interface {
	Info(string, ...any)
	Error(error, string, ...any)
}) {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	finished := make(chan struct{})
	go func() { s.inflight.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(s.LeaseDuration / 2):
		logger.Info("reconciles still in flight when leaving; releasing the lease anyway")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	leases := s.leaseClient.CoordinationV1().Leases(s.Namespace)
	current, err := leases.Get(ctx, s.Identity, metav1.GetOptions{})
	if err != nil {
		logger.Error(err, "release member lease")
		return
	}
	if current.Annotations == nil {
		current.Annotations = map[string]string{}
	}
	current.Annotations[shardDeadAnnotation] = "true"
	current.Annotations[shardLeavingAnnotation] = "true"
	if _, err := leases.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
		logger.Error(err, "release member lease")
		return
	}
	logger.Info("left the operator's members: the others take its Clusters over")
}
