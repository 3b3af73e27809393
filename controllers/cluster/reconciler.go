package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/controllers/conflict"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/controllers/sharding"
)

// Reconciler runs a Cluster: its collector workload, the placement of its targets on collector pods,
// the configuration each pod receives, and the status of the Cluster and of its Targets.
type Reconciler struct {
	client.Client
	// APIReader reads Secrets straight from the API server: the operator caches only their metadata.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  record.EventRecorder
	// Dialer reaches collector pods; tests inject their transport through it.
	Dialer collector.Dialer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PollInterval is how often collectors are asked for their targets' state when nothing else happens
	// (a backstop against missed changes). Zero means DefaultPollInterval.
	PollInterval time.Duration
	// MaxConcurrentReconciles is how many Clusters are reconciled in parallel.
	MaxConcurrentReconciles int
	// BatchSize is the most target changes a collector may have outstanding (sent, not yet acted on); zero
	// means DefaultBatchSize.
	BatchSize int
	// DropTimeout bounds how long a moved target waits for its old collector to drop it; zero means
	// DefaultDropTimeout.
	DropTimeout time.Duration
	// RepairAfter is how long a collector may act on none of its outstanding changes before they count as
	// dropped; zero means DefaultRepairAfter.
	RepairAfter time.Duration
	// CollectorSilence is how long a collector whose pod looks ready may fail to answer before its pod counts
	// as unavailable; zero means DefaultCollectorSilence.
	CollectorSilence time.Duration
	// OperatorNamespace and OperatorPodLabels identify the operator's pods in the NetworkPolicies that admit
	// only them to the collectors' REST API. Empty means the namespace the operator runs in (see
	// runningNamespace) and workload.DefaultOperatorPodLabels; a namespace that stays unknown (an operator
	// running outside the cluster) admits pods with those labels from every namespace.
	OperatorNamespace string
	OperatorPodLabels map[string]string

	// Discovery tells whether the ServiceMonitor CRD is installed; nil means a discovery client for the
	// manager's configuration. CRDRecheck is how long its answer is trusted; zero means DefaultCRDRecheck.
	Discovery  discovery.DiscoveryInterface
	CRDRecheck time.Duration

	// Sharding, when set, makes this replica reconcile only the Clusters the operator's replicas assign it
	// (controllers/sharding); nil: it reconciles every Cluster (under leader election).
	Sharding Sharding

	// owned writes the objects a Cluster owns; made by SetupWithManager.
	owned owned.Writer
	// turns answers, Cluster by Cluster, whether this replica reconciles it and may push now: Sharding, or
	// soleReplica without it.
	turns turns
	// serviceMonitorCRD tells whether ServiceMonitors can be written; made by SetupWithManager.
	serviceMonitorCRD *serviceMonitorCRD
	// remembered is what the reconciler keeps between reconciles (state.go). SetupWithManager makes both.
	remembered
}

// Reconcile is one pass over a Cluster: observe, measure (weighing by Measured), place, read what the collectors
// run, push each one handover
// step, mark the pods configured, restart failed targets, then report — each step in its own file.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)

	var cluster operatorv1alpha1.Cluster
	if err := r.Get(ctx, req.NamespacedName, &cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			if !r.turns.CleansUp(req.NamespacedName) {
				return ctrl.Result{}, nil // the replica the Cluster was last assigned to cleans up after it
			}
			return ctrl.Result{}, errors.Join(r.removeFromTargetStatuses(ctx, req.NamespacedName),
				r.removeFromRejections(ctx, req.NamespacedName), r.removeFromProcessors(ctx, req.NamespacedName))
		}
		return ctrl.Result{}, fmt.Errorf("get cluster: %w", err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	turn, err := r.turns.Turn(ctx, &cluster)
	if err != nil || !turn.Proceed {
		return turn.Result, err
	}
	defer turn.Done()

	world, err := r.observe(ctx, &cluster)
	if taken := (*owned.NameTakenError)(nil); errors.As(err, &taken) {
		after, err := r.reportCredentialsTaken(ctx, &cluster, taken)
		if err != nil {
			return conflict.Retry(ctx, err)
		}
		return ctrl.Result{RequeueAfter: after}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.splitOverDomains(&cluster, world); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.ensureWorkload(ctx, &cluster, world); err != nil {
		return ctrl.Result{}, err
	}
	r.measureWeights(ctx, &cluster, world)
	plan := r.place(&cluster, world)
	reachable := pushablePods(world, plan)
	asked := append(append([]int(nil), reachable...), world.silentPods()...)
	runtimes := r.readCollectors(ctx, &cluster, world, asked)
	r.recordSilence(req.NamespacedName, world, asked, runtimes)
	pushCtx, endPushes, mayPush := r.turns.Fence(ctx, &cluster, turn)
	if !mayPush {
		return ctrl.Result{RequeueAfter: sharding.LookAgain}, nil
	}
	defer endPushes()
	// The probe is a POST, however harmless: only the replica that may push sends one.
	r.probeCollectors(pushCtx, &cluster, world, asked)
	pushed := r.push(pushCtx, &cluster, world, plan, runtimes, reachable)
	r.wakeForAPIChecks(&cluster, world)
	r.rereadPushed(ctx, &cluster, world, runtimes, pushed)
	pushed.countRunning(plan, runtimes)
	reportTunnelTargets(world, pushed, runtimes)
	// A failed readiness-gate write does not stop the reconcile: the statuses below are still worth
	// reporting and nothing else depends on the gate. It is returned at the end, for a retry with backoff
	// (as is every earlier return); until then the pod keeps the gate it had.
	gateErr := r.writeReadinessGates(ctx, req.NamespacedName, plan, pushed)
	r.followCollectors(ctx, &cluster, world, reachable)
	r.memoryOf(req.NamespacedName).outputHealth = r.readOutputHealth(world, reachable)
	nextRestart := r.restartFailedTargets(pushCtx, &cluster, world, runtimes, pushed)
	// The Cluster's and its Pipelines' reports do not depend on the Target statuses: a Target whose write
	// failed (a conflict, a refusal) holds them back no more than the other Targets' writes, and its error is
	// returned after them.
	statuses, statusErr := r.writeTargetStatuses(ctx, &cluster, world, plan, runtimes, pushed)
	if err := r.reportStatus(ctx, &cluster, world, plan, pushed); err != nil {
		return conflict.Retry(ctx, err)
	}
	if err := r.reportPipelines(ctx, &cluster, world); err != nil {
		return conflict.Retry(ctx, err)
	}
	if statusErr != nil {
		return conflict.Retry(ctx, statusErr)
	}

	if failed := pushed.retriedPods(); len(failed) > 0 {
		// Returning the error makes controller-runtime retry with exponential backoff; the status already
		// names the pods.
		return ctrl.Result{}, fmt.Errorf("push configuration to %d pod(s): %v", len(failed), failed)
	}
	if gateErr != nil {
		return ctrl.Result{}, gateErr
	}
	next := r.nextLook(plan, runtimes, pushed, nextRestart, r.nextSilenceLook(req.NamespacedName), world.domainBlockAt(),
		statuses.firstStatusDue)
	if len(world.taken.Names()) > 0 {
		next = min(next, namesTakenLook) // an object without the Cluster's label wakes nothing when it goes
	}
	if statuses.backlog {
		next = min(next, conflict.RetryAfter) // the Target statuses left for the next reconcile
	}
	if statuses.cacheBehind {
		// Not sooner: a burst of writes leaves many Targets so, and a Target's status change wakes nothing.
		next = min(next, cacheBehindLook)
	}
	logger.V(1).Info("reconciled", "targets", len(world.selection.Targets), "unassigned", len(plan.result.Unassigned),
		"moves", len(plan.result.Moves), "requeueAfter", next)
	return ctrl.Result{RequeueAfter: next}, nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
