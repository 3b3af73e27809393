package targetsource

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Under sharding, a replica records itself in status.syncing before it reads the inventory, and the sync's
// result clears it. Two replicas may both think they run a TargetSource: members that disagree for a moment,
// or a replica that got it while the last one's sync is still in flight. The record makes them take turns: the
// record is written conditionally on the status the replica read, so of two that read the same status one
// writes it and the other conflicts, and a replica that reads another running member's record waits for its
// result. A record whose member stopped running (killed: its Lease expired) is ignored.

// syncHold bounds how long a running member's record holds the other replicas off: a sync that outlives it
// is taken as stuck.
const syncHold = 10 * time.Minute

// syncInFlightRecheck is how soon a replica that found another replica's sync in flight, or lost the race to
// record its own, looks again.
const syncInFlightRecheck = time.Second

// claimSync records this replica as the one syncing the TargetSource (status.syncing), conditionally on the
// status in ts, which it updates to the one written. claimed is false when another running member's sync is
// in flight, or when another write came first.
func (r *Reconciler) claimSync(ctx context.Context, ts *operatorv1alpha1.TargetSource, now time.Time) (claimed bool, err error) {
	self := r.Shard.MemberName()
	if s := ts.Status.Syncing; s != nil && s.Member != self && r.Shard.MemberRunning(s.Member) && now.Sub(s.Since.Time) < syncHold {
		log.FromContext(ctx).V(1).Info("another replica's sync is in flight", "member", s.Member, "since", s.Since.Time)
		return false, nil
	}
	claim := ts.DeepCopy()
	claim.Status.Syncing = &operatorv1alpha1.TargetSourceSyncing{Member: self, Since: metav1.NewTime(now)}
	if err := r.Status().Update(ctx, claim); err != nil {
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("another write came before this replica's record of its sync")
			return false, nil
		}
		return false, fmt.Errorf("record the sync in status.syncing: %w", err)
	}
	*ts = *claim
	return true, nil
}

// releaseSync clears status.syncing when it names this replica: a sync whose result could not be written left
// it, and the TargetSource went to another replica, which must not wait for it.
func (r *Reconciler) releaseSync(ctx context.Context, ts *operatorv1alpha1.TargetSource) error {
	if ts.Status.Syncing == nil || ts.Status.Syncing.Member != r.Shard.MemberName() {
		return nil
	}
	released := ts.DeepCopy()
	released.Status.Syncing = nil
	if err := r.Status().Update(ctx, released); err != nil {
		return fmt.Errorf("clear this replica's status.syncing: %w", err)
	}
	return nil
}
