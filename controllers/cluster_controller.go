package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// ClusterReconciler runs a Cluster: its collector workload, the placement of its targets on collector pods,
// the configuration each pod receives, and the status of the Cluster and of its Targets.
type ClusterReconciler struct {
	client.Client
	// APIReader reads Secrets straight from the API server: the operator caches only their metadata.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  record.EventRecorder
	// Dialer reaches collector pods; tests inject their transport through it.
	Dialer CollectorDialer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PollInterval is how often collectors are asked for their targets' state when nothing else happens
	// (a backstop against missed changes). Zero means 60s.
	PollInterval time.Duration
	// MaxConcurrentReconciles is how many Clusters are reconciled in parallel.
	MaxConcurrentReconciles int

	restarts restartBackoff
	streams  *stateStreams
	// written remembers the last state written per Cluster and Target, acked the configuration hash each
	// pod (by UID) acknowledged, and configured the readiness-gate condition last written per pod: the cache
	// may lag behind the operator's own writes, and reconciling from a stale view must not write or push the
	// same thing twice.
	written    sync.Map
	acked      sync.Map
	configured sync.Map
	// missingSince holds, per Cluster, when each desired pod ordinal now missing was first seen missing:
	// the grace period of a pod that is not recreated runs from then.
	missingSince sync.Map
}

// Reconcile is one pass over a Cluster: observe, place, push, mark the pods configured, then report — each
// step in its own file.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)

	var cluster operatorv1alpha1.Cluster
	if err := r.Get(ctx, req.NamespacedName, &cluster); err != nil {
		if apierrors.IsNotFound(err) {
			if r.streams != nil {
				r.streams.forget(req.NamespacedName)
			}
			r.missingSince.Delete(req.NamespacedName)
			return ctrl.Result{}, r.forgetCluster(ctx, req.Namespace, req.Name)
		}
		return ctrl.Result{}, fmt.Errorf("get cluster: %w", err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	world, err := r.observe(ctx, &cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.ensureWorkload(ctx, &cluster, world); err != nil {
		return ctrl.Result{}, err
	}
	plan := r.place(&cluster, world)
	pushed := r.push(ctx, &cluster, world, &plan)
	// A failed readiness-gate write does not stop the reconcile: the statuses below are still worth
	// reporting and nothing else depends on the gate. It is returned at the end, for a retry with backoff
	// (as is every earlier return); until then the pod keeps the gate it had.
	gateErr := r.reportPodsConfigured(ctx, plan, pushed)
	r.followCollectors(ctx, &cluster, world, plan)
	states := r.collectTargetStates(ctx, &cluster, world, pushed)
	if err := r.writeTargetStatuses(ctx, &cluster, world, plan, states); err != nil {
		return conflictIsRetry(ctx, err)
	}
	if err := r.reportStatus(ctx, &cluster, world, plan, pushed); err != nil {
		return conflictIsRetry(ctx, err)
	}
	if err := r.reportPipelines(ctx, &cluster, world); err != nil {
		return conflictIsRetry(ctx, err)
	}

	if failed := pushed.failedPods(); len(failed) > 0 {
		// Returning the error makes controller-runtime retry with exponential backoff; the status already
		// names the pods.
		return ctrl.Result{}, fmt.Errorf("push configuration to %d pod(s): %v", len(failed), failed)
	}
	if gateErr != nil {
		return ctrl.Result{}, gateErr
	}
	next := r.nextLook(world, plan, states)
	logger.V(1).Info("reconciled", "targets", len(world.selection.Targets), "unassigned", len(plan.result.Unassigned),
		"moves", len(plan.result.Moves), "requeueAfter", next)
	return ctrl.Result{RequeueAfter: next}, nil
}

// conflictIsRetry turns a write conflict (the cache was behind the API server) into a prompt retry instead
// of an error: a conflict says nothing is wrong, and errors back off exponentially.
func conflictIsRetry(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("write conflict, looking again", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// conflictRetry is how soon a reconcile that met a write conflict looks again: long enough for the cache to
// catch up with the write that caused it.
const conflictRetry = 250 * time.Millisecond

// followCollectors keeps an event stream open to every ready collector pod of the Cluster.
func (r *ClusterReconciler) followCollectors(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, plan placementPlan) {
	if r.streams == nil {
		return
	}
	var ready []*corev1.Pod
	for _, o := range plan.availability.Ready {
		if p := w.pods[o]; p != nil {
			ready = append(ready, p)
		}
	}
	c, tlsConfig := cluster.DeepCopy(), w.clientTLS()
	r.streams.track(ctx, client.ObjectKeyFromObject(cluster), ready, func(p *corev1.Pod) (*gnmic.Client, error) {
		return r.Dialer.StreamClient(c, p, tlsConfig)
	})
}

func (r *ClusterReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// nextLook is when the Cluster must be looked at again although nothing in the API changed: when a pod's
// grace period ends, when a failed target may be restarted, or the collector polling backstop.
func (r *ClusterReconciler) nextLook(world *world, plan placementPlan, states targetStates) time.Duration {
	poll := r.PollInterval
	if poll == 0 {
		poll = 60 * time.Second
	}
	next := poll
	if !states.allCollecting {
		next = min(next, 5*time.Second)
	}
	now := r.now()
	if !plan.availability.GraceEnds.IsZero() {
		next = min(next, plan.availability.GraceEnds.Sub(now)+time.Second)
	}
	if !states.nextRestart.IsZero() {
		next = min(next, max(states.nextRestart.Sub(now), 100*time.Millisecond))
	}
	return max(next, 100*time.Millisecond)
}
