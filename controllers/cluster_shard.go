package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/fleetmetrics"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// shardWait is how soon a replica that must wait for a handover looks again.
const shardWait = time.Second

// shardTurn is what the reconciler may do with a Cluster under sharding: go on (reconcile, with the fence's
// generation) or stop with result.
type shardTurn struct {
	proceed    bool
	generation int64
	result     ctrl.Result
	done       func()
}

// takeShardTurn asks the sharding decision whether this replica reconciles the Cluster, and carries out the
// handover steps the decision asks for: take the Cluster over, or let it go (drain). Without sharding it
// always proceeds.
func (r *ClusterReconciler) takeShardTurn(ctx context.Context, cluster *operatorv1alpha1.Cluster) (shardTurn, error) {
	if r.Sharding == nil {
		return shardTurn{proceed: true, done: func() {}}, nil
	}
	action, generation, done := r.Sharding.decide(cluster)
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}
	switch action {
	case shard.Reconcile:
		if !r.Sharding.covers(key) {
			// Its StatefulSet and Pods are not cached here yet: reconciling now would see none and re-place
			// every target. The cache's sync wakes the Cluster; shardWait is the backstop.
			done()
			log.FromContext(ctx).V(1).Info("waiting for this replica's cache of the Cluster's objects")
			return shardTurn{result: ctrl.Result{RequeueAfter: shardWait}}, nil
		}
		return shardTurn{proceed: true, generation: generation, done: done}, nil
	case shard.TakeOver:
		defer done()
		return shardTurn{result: ctrl.Result{RequeueAfter: 100 * time.Millisecond}}, r.takeOver(ctx, cluster)
	case shard.Drain:
		defer done()
		return shardTurn{}, r.drain(ctx, cluster, key)
	case shard.Wait:
		done()
		return shardTurn{result: ctrl.Result{RequeueAfter: shardWait}}, nil
	default:
		done()
		r.letGo(key)
		return shardTurn{}, nil
	}
}

// takeOverAttempts bounds the takeover writes for one decision: a write that conflicts is tried again once
// the cache holds the write it conflicted with, so that a status write racing it (a drain, a status update)
// does not make the Cluster wait for the next assignment round.
const takeOverAttempts = 3

// takeOverRereadWait bounds how long a conflicted takeover waits for the cache to bring the newer Cluster.
const takeOverRereadWait = 2 * time.Second

// takeOver records this replica as the Cluster's owner at the next generation, conditionally on the
// resourceVersion it decided on. On a conflict it waits for the cache to hold the newer Cluster and, if this
// replica should still take it over (another replica's takeover may have raced it), writes again; after
// takeOverAttempts the Cluster's next reconcile decides again. It reads nothing from the API server: at the
// moment of a takeover it is the busiest it gets.
func (r *ClusterReconciler) takeOver(ctx context.Context, cluster *operatorv1alpha1.Cluster) error {
	key := client.ObjectKeyFromObject(cluster)
	for attempt := 1; ; attempt++ {
		err := r.writeTakeOver(ctx, cluster)
		if !apierrors.IsConflict(err) {
			return err
		}
		if attempt == takeOverAttempts {
			log.FromContext(ctx).V(1).Info("the takeover conflicted every time; the Cluster's next reconcile decides again", "attempts", attempt)
			return nil
		}
		fresh, err := r.Sharding.newerCluster(ctx, key, cluster.ResourceVersion)
		if err != nil {
			return fmt.Errorf("read the Cluster again after a conflicted takeover: %w", err)
		}
		if fresh == nil || !r.Sharding.takesOver(fresh) {
			return nil // gone, not newer yet, taken over by another replica or assigned elsewhere: its reconcile decides
		}
		cluster = fresh
	}
}

// writeTakeOver writes this replica as the Cluster's owner at the next generation, with optimistic lock on
// the resourceVersion read, and reports the handover (metric, log, event). A conflict is returned as is.
func (r *ClusterReconciler) writeTakeOver(ctx context.Context, cluster *operatorv1alpha1.Cluster) error {
	updated := cluster.DeepCopy()
	previous := ""
	generation := int64(1)
	if cluster.Status.Shard != nil {
		previous = cluster.Status.Shard.Owner
		generation = cluster.Status.Shard.Generation + 1
	}
	updated.Status.Shard = &operatorv1alpha1.ClusterShard{Owner: r.Sharding.Identity, Generation: generation,
		Since: &metav1.Time{Time: r.now()}}
	if err := r.Status().Patch(ctx, updated, client.MergeFromWithOptions(cluster, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return err
		}
		return fmt.Errorf("take the Cluster over: %w", err)
	}
	shardHandovers.WithLabelValues("took_over").Inc()
	from := "no replica"
	if previous != "" {
		from = previous
	}
	log.FromContext(ctx).Info("took the Cluster over", "from", previous, "generation", generation)
	r.Recorder.Eventf(updated, corev1.EventTypeNormal, operatorv1alpha1.EventShardTakenOver,
		"operator replica %s reconciles the Cluster from now on (from %s, generation %d)", r.Sharding.Identity, from, generation)
	return nil
}

// drain lets the Cluster go: no reconcile of it is in flight here (controller-runtime never runs two of one
// Cluster at once), so closing its collector streams and forgetting it finishes this replica's part, which
// it then acknowledges for the next owner.
func (r *ClusterReconciler) drain(ctx context.Context, cluster *operatorv1alpha1.Cluster, key types.NamespacedName) error {
	r.letGo(key)
	updated := cluster.DeepCopy()
	updated.Status.Shard.Drained = true
	if err := r.Status().Patch(ctx, updated, client.MergeFromWithOptions(cluster, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("acknowledge the drain of the Cluster: %w", err)
	}
	shardHandovers.WithLabelValues("drained").Inc()
	log.FromContext(ctx).Info("let the Cluster go", "generation", cluster.Status.Shard.Generation)
	r.Recorder.Eventf(updated, corev1.EventTypeNormal, operatorv1alpha1.EventShardDrained,
		"operator replica %s let the Cluster go: it closed its collector streams and pushes nothing more", r.Sharding.Identity)
	return nil
}

// letGo forgets what this replica held of a Cluster it no longer reconciles: collector streams, memory,
// ledger and its metrics, which the owner reports.
func (r *ClusterReconciler) letGo(key types.NamespacedName) {
	// Every event of a Cluster this replica does not own lands here: return at once when it holds nothing.
	// A reconcile makes the Cluster's memory (place) before it opens collector streams (followCollectors),
	// so without memory there are no streams either.
	if _, held := r.memories.Load(key); !held {
		return
	}
	if r.streams != nil {
		r.streams.Forget(key)
	}
	r.forgetMemory(key)
	if r.wakes != nil {
		r.wakes.forget(key)
	}
	r.credentials.Forget(key)
	r.ledger.ForgetCluster(key)
	r.restarts.forgetCluster(key.Namespace, key.Name)
	fleetmetrics.ForgetCluster(key.Namespace, key.Name)
}

// pushFence is the check before a push round: under sharding, this replica still owns the Cluster at the
// generation its reconcile began with and its Lease is valid. It returns the context the pushes run in,
// which ends with the Lease.
func (r *ClusterReconciler) pushFence(ctx context.Context, cluster *operatorv1alpha1.Cluster, turn shardTurn) (context.Context, context.CancelFunc, bool) {
	if r.Sharding == nil {
		return ctx, func() {}, true
	}
	deadline, ok := r.Sharding.mayPush(cluster, turn.generation)
	if !ok {
		log.FromContext(ctx).Info("fenced: no longer the Cluster's owner at this generation, or the member lease ran out; pushing nothing")
		return ctx, func() {}, false
	}
	pushCtx, cancel := context.WithDeadline(ctx, deadline)
	return pushCtx, cancel, true
}
