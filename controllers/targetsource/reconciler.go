package targetsource

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/conflict"
)

// The TargetSource's permissions: it reads TargetSources and writes their status, creates, updates and deletes
// the Targets it owns (it lists every Target of the namespace from the API server, to see conflicts, under the
// Cluster controller's grant), and reads the Secrets and ConfigMaps its providers name (rbac.go's grants). It
// gets a TargetSource from the API server before syncing it, for the last sync's status.
//
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=targetsources,verbs=get;list;watch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=targetsources/status,verbs=update
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=targets,verbs=create;update;delete

// Reconciler keeps each TargetSource's Targets in sync with its inventory: it fetches the inventory through a
// provider (internal/inventory), maps the records to Targets (internal/targetmapping), plans the writes with
// the sync core (internal/targetsync), writes them in batches and reports.
type Reconciler struct {
	// Client writes Targets and TargetSource status, and reads TargetSources from the cache.
	client.Client
	// APIReader lists Targets and reads Secrets and ConfigMaps from the API server.
	APIReader client.Reader
	Recorder  record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Shard, when set, runs each TargetSource on the one replica of a sharded operator that the members'
	// rendezvous gives it to (controllers/sharding).
	Shard Assigner

	// HTTPTransport, when set, replaces the HTTP providers' transport (tests).
	HTTPTransport http.RoundTripper

	providers providers
	mappings  mappings
	wakes     wakes
}

// Assigner says which replica of a sharded operator runs an object, and which replicas are running.
type Assigner interface {
	// Assigned is true when this replica runs the object named key. Replicas that briefly disagree on the
	// members may both think they run one, and a replica that gets one may find the last replica's sync still
	// in flight: a sync starts only after it recorded itself in status.syncing (claimSync).
	Assigned(key string) bool
	// MemberName is this replica's member name.
	MemberName() string
	// MemberRunning is true when the named member's Lease, as this replica sees it, shows a process that may
	// be in the middle of a sync: Ready or Draining (not expired, dead or unknown).
	MemberRunning(member string) bool
	// OnMembersChanged registers f, called when the live members change (TargetSources may move); f must
	// not block.
	OnMembersChanged(f func())
}

// shardRecheck is how often a replica that another replica runs a TargetSource for looks again: a backstop, for
// every replica looks at every TargetSource at once when the members change (lookAtEvery).
const shardRecheck = 30 * time.Second

// NewReconciler builds a Reconciler over the manager's clients.
func NewReconciler(mgr ctrl.Manager) *Reconciler {
	return &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorderFor("gnmic-operator"),
	}
}

// Reconcile syncs a TargetSource when its interval has passed since its last sync (at once after a spec
// change): fetch, map, plan, write, report.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ts operatorv1alpha1.TargetSource
	if err := r.Get(ctx, req.NamespacedName, &ts); err != nil {
		if apierrors.IsNotFound(err) {
			// Its Targets go with it: they carry its owner reference.
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get TargetSource: %w", err)
	}
	woken := r.wakes.taken(req.NamespacedName)
	if !ts.DeletionTimestamp.IsZero() {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if r.Shard != nil && !r.Shard.Assigned("targetsource/"+req.String()) {
		// Another replica syncs it. What this one fetched is forgotten: if it gets the TargetSource back, it
		// starts from the status, which is all a sync relies on.
		r.forget(req.NamespacedName)
		if err := r.releaseSync(ctx, &ts); err != nil {
			return conflict.Retry(ctx, err)
		}
		return ctrl.Result{RequeueAfter: shardRecheck}, nil
	}
	now := r.now()
	if wait := r.untilDue(&ts, now); wait > 0 && !woken {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	// The cache may not hold the last sync's status yet (another replica's, or this one's just written): a
	// sync on a stale status would number itself as that one did and count a miss it did not see. Read it
	// from the API server, and look again.
	if err := r.APIReader.Get(ctx, req.NamespacedName, &ts); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("read TargetSource: %w", err))
	}
	if wait := r.untilDue(&ts, now); wait > 0 && !woken {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if r.Shard != nil {
		claimed, err := r.claimSync(ctx, &ts, now)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !claimed {
			if woken {
				// The wake is answered by this replica's next look: the other sync may have read the
				// inventory before what woke this one.
				r.wakes.keep(req.NamespacedName)
			}
			return ctrl.Result{RequeueAfter: syncInFlightRecheck}, nil
		}
	}

	outcome := r.sync(ctx, &ts)
	status := reportStatus(&ts, outcome, r.now())
	r.recordEvents(&ts, outcome)
	if err := r.writeStatus(ctx, &ts, status); err != nil {
		return conflict.Retry(ctx, err)
	}
	log.FromContext(ctx).V(1).Info("synced", "ok", outcome.err == nil, "records", outcome.records,
		"created", outcome.written.created, "updated", outcome.written.updated, "marked", outcome.written.marked,
		"deleted", outcome.written.deleted, "conflicts", len(outcome.plan.Conflicts), "took", r.now().Sub(now))
	return ctrl.Result{RequeueAfter: max(r.untilDue(&ts, r.now()), time.Second)}, nil
}

// untilDue is how long before the TargetSource's next sync is due: its interval after the last attempt (10s
// after one whose writes failed, longer after syncs over budget: budgetBackoff), or now when its spec changed since or a sync was requested
// (SyncRequestedAnnotation).
func (r *Reconciler) untilDue(ts *operatorv1alpha1.TargetSource, now time.Time) time.Duration {
	last := ts.Status.LastAttemptTime
	if last == nil || ts.Status.ObservedGeneration != ts.Generation ||
		ts.Annotations[operatorv1alpha1.SyncRequestedAnnotation] != ts.Status.LastSyncRequest {
		return 0
	}
	wait := interval(ts)
	switch c := meta.FindStatusCondition(ts.Status.Conditions, operatorv1alpha1.ConditionSynced); {
	case c == nil:
	case c.Reason == operatorv1alpha1.ReasonApplyFailed:
		// Writes that failed part way (a conflict with another writer, an API server that hiccuped) are retried
		// soon: the inventory was read fine, and the Targets are half way to it.
		wait = min(wait, applyRetry)
	case c.Reason == operatorv1alpha1.ReasonBudgetExceeded:
		// Kept in the status, so that a new leader or another replica waits as long.
		wait = budgetBackoff(wait, ts.Status.BudgetExceededSyncs)
	}
	return last.Add(wait).Sub(now)
}

// applyRetry is how soon a sync whose writes failed part way is tried again.
const applyRetry = 10 * time.Second

// interval is the time between two syncs.
func interval(ts *operatorv1alpha1.TargetSource) time.Duration {
	if h := ts.Spec.HTTP; h != nil && h.Interval != nil && h.Interval.Duration > 0 {
		return h.Interval.Duration
	}
	if c := ts.Spec.Consul; c != nil && c.Interval != nil && c.Interval.Duration > 0 {
		return c.Interval.Duration
	}
	return defaultInterval
}

// defaultInterval is the interval of a provider without one (a push inventory is synced at each post, and
// every defaultInterval to count misses of what it stopped sending).
const defaultInterval = 5 * time.Minute

// forget drops what this replica remembers of a TargetSource: its provider, its last snapshot, its compiled
// mapping.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.providers.forget(key)
	r.mappings.forget(key)
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// writeStatus writes the status computed for this sync, conditional on the TargetSource read at its start: a
// replica that synced it meanwhile wins, and this sync's number is not counted twice.
func (r *Reconciler) writeStatus(ctx context.Context, ts *operatorv1alpha1.TargetSource, status operatorv1alpha1.TargetSourceStatus) error {
	ts.Status = status
	if err := r.Status().Update(ctx, ts); err != nil {
		return fmt.Errorf("write TargetSource status: %w", err)
	}
	return nil
}
