package sharding

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// LookAgain is how soon a replica that must wait for a handover (or for its caches of a Cluster) looks at the
// Cluster again.
const LookAgain = time.Second

// Turn is what a reconcile of a Cluster may do under sharding.
type Turn struct {
	// Proceed is true when this replica reconciles the Cluster now; Done must be called when the reconcile
	// ends. Otherwise the reconcile ends at once, with Result.
	Proceed bool
	Result  ctrl.Result
	// generation is the ownership generation the reconcile began with: its pushes are fenced on it.
	generation int64
	release    func()
}

// Done ends the reconcile's hold on the Cluster: a replica that leaves waits for it.
func (t Turn) Done() {
	if t.release != nil {
		t.release()
	}
}

// Turn is whether this replica reconciles the Cluster now. It carries out itself the handover steps the
// assignment asks for: it takes the Cluster over, or lets it go (drains it) after the reconciler let go of what
// it held (Reconciler.LetGo).
func (s *Member) Turn(ctx context.Context, cluster *operatorv1alpha1.Cluster) (Turn, error) {
	action, generation, release := s.decideAndHold(cluster)
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}
	switch action {
	case shard.Reconcile:
		if !s.Covers(key) {
			// Its StatefulSet and Pods are not cached here yet: reconciling now would see none and re-place
			// every target. The cache's sync wakes the Cluster; LookAgain is the backstop.
			release()
			log.FromContext(ctx).V(1).Info("waiting for this replica's cache of the Cluster's objects")
			return Turn{Result: ctrl.Result{RequeueAfter: LookAgain}}, nil
		}
		return Turn{Proceed: true, generation: generation, release: release}, nil
	case shard.TakeOver:
		defer release()
		return Turn{Result: ctrl.Result{RequeueAfter: 100 * time.Millisecond}}, s.takeOver(ctx, cluster)
	case shard.Drain:
		defer release()
		return Turn{}, s.drain(ctx, cluster, key)
	case shard.Wait:
		release()
		return Turn{Result: ctrl.Result{RequeueAfter: LookAgain}}, nil
	default:
		release()
		s.letGo(key)
		return Turn{}, nil
	}
}

// takeOverAttempts bounds the takeover writes for one decision: a write that conflicts is tried again once
// the cache holds the write it conflicted with, so that a status write racing it (a drain, a status update)
// does not make the Cluster wait for the next assignment round.
const takeOverAttempts = 3

// takeOverRereadWait bounds how long a conflicted takeover waits for the cache to bring the newer Cluster.
const takeOverRereadWait = 2 * time.Second

// takeOverCluster records this replica as the Cluster's owner at the next generation, conditionally on the
// resourceVersion it decided on. On a conflict it waits for the cache to hold the newer Cluster and, if this
// replica should still take it over (another replica's takeover may have raced it), writes again; after
// takeOverAttempts the Cluster's next reconcile decides again. It reads nothing from the API server: at the
// moment of a takeover it is the busiest it gets.
func (s *Member) takeOverCluster(ctx context.Context, cluster *operatorv1alpha1.Cluster) error {
	key := client.ObjectKeyFromObject(cluster)
	for attempt := 1; ; attempt++ {
		err := s.writeTakeOver(ctx, cluster)
		if !apierrors.IsConflict(err) {
			return err
		}
		if attempt == takeOverAttempts {
			log.FromContext(ctx).V(1).Info("the takeover conflicted every time; the Cluster's next reconcile decides again", "attempts", attempt)
			return nil
		}
		fresh, err := s.newerCluster(ctx, key, cluster.ResourceVersion)
		if err != nil {
			return fmt.Errorf("read the Cluster again after a conflicted takeover: %w", err)
		}
		if fresh == nil || !s.takesOver(fresh) {
			return nil // gone, not newer yet, taken over by another replica or assigned elsewhere: its reconcile decides
		}
		cluster = fresh
	}
}

// writeTakeOver writes this replica as the Cluster's owner at the next generation, with optimistic lock on
// the resourceVersion read, and reports the handover (metric, log, event). A conflict is returned as is.
func (s *Member) writeTakeOver(ctx context.Context, cluster *operatorv1alpha1.Cluster) error {
	updated := cluster.DeepCopy()
	previous := ""
	generation := int64(1)
	if cluster.Status.Shard != nil {
		previous = cluster.Status.Shard.Owner
		generation = cluster.Status.Shard.Generation + 1
	}
	updated.Status.Shard = &operatorv1alpha1.ClusterShard{Owner: s.Identity, Generation: generation,
		Since: &metav1.Time{Time: s.now()}}
	if err := s.writer.Status().Patch(ctx, updated, client.MergeFromWithOptions(cluster, client.MergeFromWithOptimisticLock{})); err != nil {
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
	s.recorder.Eventf(updated, corev1.EventTypeNormal, operatorv1alpha1.EventShardTakenOver,
		"operator replica %s reconciles the Cluster from now on (from %s, generation %d)", s.Identity, from, generation)
	return nil
}

// drain lets the Cluster go: no reconcile of it is in flight here (controller-runtime never runs two of one
// Cluster at once), so the reconciler letting go of it (its collector streams, its memory) finishes this
// replica's part, which it then acknowledges for the next owner.
func (s *Member) drain(ctx context.Context, cluster *operatorv1alpha1.Cluster, key types.NamespacedName) error {
	s.letGo(key)
	updated := cluster.DeepCopy()
	updated.Status.Shard.Drained = true
	if err := s.writer.Status().Patch(ctx, updated, client.MergeFromWithOptions(cluster, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("acknowledge the drain of the Cluster: %w", err)
	}
	shardHandovers.WithLabelValues("drained").Inc()
	log.FromContext(ctx).Info("let the Cluster go", "generation", cluster.Status.Shard.Generation)
	s.recorder.Eventf(updated, corev1.EventTypeNormal, operatorv1alpha1.EventShardDrained,
		"operator replica %s let the Cluster go: it closed its collector streams and pushes nothing more", s.Identity)
	return nil
}

// GenerationHeader is the header every request of a push round carries the Cluster's ownership generation in,
// so that a collector's request log (and the e2e suites' fence check, test/shardfence) says under which
// ownership each request was sent. Collectors ignore it.
const GenerationHeader = "Gnmic-Operator-Shard-Generation"

// Fence is the check before a reconcile's push round: this replica still owns the Cluster at the generation
// the reconcile began with (turn) and its Lease is valid. It returns the context the pushes run in, which ends
// with the Lease and carries the generation in every request (GenerationHeader); ok is false when nothing may
// be pushed.
func (s *Member) Fence(ctx context.Context, cluster *operatorv1alpha1.Cluster, turn Turn) (pushCtx context.Context, end context.CancelFunc, ok bool) {
	deadline, ok := s.mayPush(cluster, turn.generation)
	if !ok {
		log.FromContext(ctx).Info("fenced: no longer the Cluster's owner at this generation, or the member lease ran out; pushing nothing")
		return ctx, func() {}, false
	}
	pushCtx, end = context.WithDeadline(ctx, deadline)
	pushCtx = gnmic.WithRequestHeader(pushCtx, GenerationHeader, strconv.FormatInt(turn.generation, 10))
	return pushCtx, end, true
}
