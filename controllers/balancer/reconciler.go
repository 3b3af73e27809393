package balancer

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/conflict"
)

// The Balancer's permissions. Every scale subresource it may write is listed by kind: a Balancer over another
// kind needs a grant of get and update on that kind's scale subresource (docs/balancer.md#permissions), and
// says so in its Balanced condition (ScaleForbidden) until it has one.
//
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=balancers,verbs=list;watch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=balancers/status,verbs=patch
// +kubebuilder:rbac:groups=apps,resources=deployments/scale;statefulsets/scale;replicasets/scale,verbs=get;update
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters/scale,verbs=get;update
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=list;watch
//
// The targets' pods are listed from the API server with the selector of each target's scale (rbac.go grants
// list on pods): the operator's pod cache holds only collector pods.

// Reconciler keeps each Balancer's replicas spread over its targets: it reads every target's scale
// subresource and pods, asks internal/balance how many replicas each target runs, writes the scales that
// differ, and reports.
type Reconciler struct {
	// Client reads Balancers and HorizontalPodAutoscalers from the cache and writes Balancer status.
	client.Client
	// APIReader lists the targets' pods from the API server.
	APIReader client.Reader
	// Scales reads and writes the targets' scale subresources, whatever their kind.
	Scales scale.ScalesGetter
	// Mapper maps a scaleTargetRef's kind to its resource.
	Mapper meta.RESTMapper
	// Discovery says which kinds serve a scale subresource.
	Discovery discovery.ServerResourcesInterface
	Recorder  record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Period is how often a Balancer looks at its targets when nothing wakes it; zero means
	// DefaultPeriod. The targets' pods are not watched: this look is how a Balancer sees them change.
	Period time.Duration

	// Shard, when set, runs each Balancer on the one replica of a sharded operator that the members'
	// rendezvous gives it to (controllers/sharding).
	Shard Assigner

	scaleSubresources scaleSubresources
}

// Assigner says which replica of a sharded operator runs an object.
type Assigner interface {
	// Assigned is true when this replica runs the object named key. Replicas that briefly disagree on the
	// members may both run one; a Balancer's writes are idempotent.
	Assigned(key string) bool
}

// DefaultPeriod is how often a Balancer looks at its targets' pods when nothing else wakes it.
const DefaultPeriod = 10 * time.Second

// NewReconciler builds a Reconciler that talks to the manager's API server: cached reads,
// pod lists from the API server, and a scale client that resolves any kind through the manager's RESTMapper
// and discovery (as kube-controller-manager's HorizontalPodAutoscaler controller does).
func NewReconciler(mgr ctrl.Manager) (*Reconciler, error) {
	disco, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("discovery client for scale subresources: %w", err)
	}
	scales, err := scale.NewForConfig(mgr.GetConfig(), mgr.GetRESTMapper(), dynamic.LegacyAPIPathResolverFunc,
		scale.NewDiscoveryScaleKindResolver(disco))
	if err != nil {
		return nil, fmt.Errorf("scale client: %w", err)
	}
	return &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scales:    scales,
		Mapper:    mgr.GetRESTMapper(),
		Discovery: disco,
		Recorder:  mgr.GetEventRecorderFor("gnmic-operator"),
	}, nil
}

// Reconcile is one look at a Balancer: observe the targets, decide with the balance core, write the scales
// that differ, report, and come back when a pod's startup timeout ends or the period has passed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var b operatorv1alpha1.Balancer
	if err := r.Get(ctx, req.NamespacedName, &b); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get balancer: %w", err)
	}
	if !b.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if r.Shard != nil && !r.Shard.Assigned("balancer/"+req.String()) {
		// Another replica of the sharded operator runs this Balancer; look again in a period, in case the
		// members change.
		return ctrl.Result{RequeueAfter: r.period()}, nil
	}

	now := r.now()
	targets, err := r.observe(ctx, &b)
	if err != nil {
		return ctrl.Result{}, err
	}
	plan := decide(&b, targets, now)
	written := r.scaleTargets(ctx, &b, targets, plan)
	if err := r.reportStatus(ctx, &b, balancerStatus(&b, targets, plan)); err != nil {
		return conflict.Retry(ctx, err)
	}
	if written.conflict {
		return ctrl.Result{RequeueAfter: conflict.RetryAfter}, nil
	}
	next := nextBalancerLook(r.period(), b.Spec.Policy.Fallback, targets, plan, written.changed, now)
	log.FromContext(ctx).V(1).Info("balanced", "replicas", plan.replicas, "placed", plan.result.Placed,
		"missing", plan.result.Missing, "unplaced", plan.result.Unplaced, "scaled", written.changed, "requeueAfter", next)
	return ctrl.Result{RequeueAfter: next}, nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) period() time.Duration {
	if r.Period == 0 {
		return DefaultPeriod
	}
	return r.Period
}
