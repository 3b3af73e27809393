package sharding

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// Labels and annotations of the member Leases of a sharded operator (docs/sharding.md).
const (
	// MemberLabel marks the Lease of one operator replica.
	MemberLabel = "operator.gnmic.dev/shard-member"
	// shardLeavingAnnotation is set by a replica that shuts down: it drains and takes nothing new.
	shardLeavingAnnotation = "operator.gnmic.dev/leaving"
	// shardDeadAnnotation is set by a replica that released its Lease, or by another replica, with a
	// conditional update, once the Lease expired. A dead Lease is never renewed again.
	shardDeadAnnotation = "operator.gnmic.dev/dead"
	// shardPodAnnotation names the pod of the member that holds the Lease, when it knows it (POD_NAME).
	shardPodAnnotation = "operator.gnmic.dev/pod"
)

// Member makes this replica one of the operator's replicas that share the Clusters (docs/sharding.md): it
// renews a Lease of its own, assigns every Cluster over the live members' Leases with internal/shard in rounds,
// takes over and drains Clusters as the assignment says, caches the objects of the Clusters it owns (its
// share), and tells the Cluster reconciler, Cluster by Cluster, whether it reconciles and may push now (Turn,
// Fence). It is one manager runnable on every replica; New builds it, main adds it.
type Member struct {
	Options

	// leaseClient reads and writes the member Leases; clusters reads Clusters (the manager's cache); writer
	// writes the takeovers and drains of Clusters; recorder reports them.
	leaseClient kubernetes.Interface
	clusters    client.Reader
	writer      client.Client
	recorder    record.EventRecorder
	// live reads the API server, for the share's kinds that no cache of the share holds yet (Client).
	live client.Reader

	// share caches the objects of the Clusters this replica owns or takes over (share_caches.go).
	share *shareCaches
	// reconciler is what the Cluster reconciler gave at setup (Serve): how to wake a Cluster and let one go,
	// and synced, which returns once the informers it reads from the manager's cache have synced (nil: at
	// once); the member joins only then.
	reconciler Reconciler
	synced     func(context.Context) error
	// takeOver records this replica as a Cluster's owner (takeOverCluster; tests replace it). The assignment
	// round runs it for every Cluster to take over, beside the reconciles: a dead member's Clusters then do
	// not wait behind the queue of regular reconciles.
	takeOver func(context.Context, *operatorv1alpha1.Cluster) error

	mu       sync.Mutex
	self     shard.Lease
	written  *coordinationv1.Lease    // its own Lease as last written: a renewal updates it without a read
	leases   map[string]observedLease // by holder, this replica's own excepted
	desired  map[string]string        // Cluster key → member Assign gives it to
	stopping bool
	inflight sync.WaitGroup
	// takingOver are the Clusters whose takeover a round runs now; shareHeldBackSince is since when rounds
	// have kept the caches' share as it was while takeovers were written (zero: they do not).
	takingOver         map[string]bool
	shareHeldBackSince time.Time
	// unseen are the owners Clusters name whose Lease this replica does not hold, each with when it first
	// found it missing (viewLocked).
	unseen map[string]time.Time
	// unseenMembers are the members MemberRunning was asked about whose Lease this replica does not hold, each
	// with when it was first asked.
	unseenMembers map[string]time.Time
	// roundMembers are the live members of the last assignment round; membersChanged the functions called
	// when a round's differ (OnMembersChanged).
	roundMembers   []string
	membersChanged []func()
	// leasesSynced is true once the watch of the member Leases has listed them all: only then does an owner
	// count as unseen.
	leasesSynced bool
	// joined is when this replica joined the members; rounds counts its assignment rounds; assignedSelf are
	// the Clusters the last round gave it, notTakenOver how many of them it did not reconcile yet; heldShare
	// latches once it held them all, cached (HoldsShare, readiness.go).
	joined       time.Time
	rounds       int
	assignedSelf []types.NamespacedName
	notTakenOver int
	heldShare    bool
	// logger is Start's, for what HoldsShare reports.
	logger logr.Logger
	kick   chan struct{} // asks for a round before the next tick
}

// Options configure a Member.
type Options struct {
	// Namespace holds the member Leases: the operator's namespace.
	Namespace string
	// Identity is this process's member name: its pod name and a nonce, unique per process lifetime
	// (NewIdentity).
	Identity string
	// Pod is the name of the pod this process runs in, when the downward API gives it (POD_NAME); empty
	// when unknown. A process that starts in a pod marks the Leases of that pod's earlier processes dead at
	// once: a pod's container runs one process at a time, so they are gone (a container restarted after a
	// crash or an OOM kill), and their Clusters need not wait for their Leases to run out.
	Pod string
	// LeaseDuration is how long a Lease stays valid after its renewal; renewals come every third of it.
	LeaseDuration time.Duration
	// WatchNamespaces are the namespaces the operator watches (--watch-namespace); none means every one. The
	// caches of this replica's share stay within them.
	WatchNamespaces []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ConsolidateAfter is how long this replica's share must stay unchanged before one cache of its whole
	// replaces the caches of the Clusters it gained one batch at a time (share_caches.go); zero means 30 s.
	ConsolidateAfter time.Duration
	// ReadyWithin is how long after joining a replica that does not hold its share yet becomes ready anyway
	// (HoldsShare); zero means shareReadyWithin.
	ReadyWithin time.Duration
	// Share are the kinds the caches of the share hold.
	Share Kinds
	// NewCache makes each cache of the share, as the manager's option of that name does; nil means cache.New.
	NewCache cache.NewCacheFunc
}

// Kinds are what the caches of a share hold, as the Cluster reconciler reads them.
type Kinds struct {
	// Owned are the kinds a Cluster owns, each labelled operator.gnmic.dev/cluster with its name: cached for
	// the share's Clusters only.
	Owned []client.Object
	// PerNamespace are the kinds cached whole in every namespace of the share (Targets, which Pipelines select
	// by label and no label ties to a Cluster).
	PerNamespace []client.Object
}

// Reconciler is what the Cluster reconciler gives sharding when it sets its controller up (Member.Serve).
type Reconciler struct {
	// Watches are its event handlers of the kinds the share holds, for every cache of the share.
	Watches []Watch
	// Synced are the kinds it reads from the manager's cache: this replica joins the members once their
	// informers have synced, so that it is given Clusters only once it can reconcile them.
	Synced []client.Object
	// Wake reconciles a Cluster at once: one taken over, or whose objects a cache just brought.
	Wake func(types.NamespacedName)
	// LetGo drops what the reconciler holds of a Cluster this replica no longer reconciles (its collector
	// streams, its memory).
	LetGo func(types.NamespacedName)
}

// New makes this process a member, over the manager's API server and caches: its Leases, its takeovers and
// the caches of its share. The manager's cache must hold Clusters.
func New(mgr ctrl.Manager, o Options) (*Member, error) {
	leases, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("clientset for member leases: %w", err)
	}
	s := newMember(o, leases, mgr.GetCache())
	s.writer, s.recorder, s.live = mgr.GetClient(), mgr.GetEventRecorderFor("gnmic-operator"), mgr.GetAPIReader()
	if s.share, err = newShareCaches(mgr.GetConfig(), mgr.GetHTTPClient(), mgr.GetScheme(), mgr.GetRESTMapper(), o.Share,
		s.wakeCluster); err != nil {
		return nil, fmt.Errorf("cache the share: %w", err)
	}
	s.share.watchNamespaces = o.WatchNamespaces
	if o.NewCache != nil {
		s.share.newCache = o.NewCache
	}
	if o.ConsolidateAfter > 0 {
		s.share.consolidateAfter = o.ConsolidateAfter
	}
	// Status changes reconcile nothing (the Cluster controller wants a new generation), but a drain must start
	// a round: the round takes the drained Cluster over.
	clusters, err := mgr.GetCache().GetInformer(context.Background(), &operatorv1alpha1.Cluster{})
	if err != nil {
		return nil, fmt.Errorf("watch Clusters for handovers: %w", err)
	}
	if _, err := clusters.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: s.noticeHandover}); err != nil {
		return nil, fmt.Errorf("watch Clusters for handovers: %w", err)
	}
	cached := mgr.GetCache()
	s.synced = func(ctx context.Context) error { return informersSynced(ctx, cached, s.reconciler.Synced) }
	return s, nil
}

// newMember is a member that reads and writes its Leases through leases and reads Clusters from clusters, with
// nothing of its own decided yet.
func newMember(o Options, leases kubernetes.Interface, clusters client.Reader) *Member {
	s := &Member{Options: o, leaseClient: leases, clusters: clusters, kick: make(chan struct{}, 1),
		leases: map[string]observedLease{}, desired: map[string]string{}, takingOver: map[string]bool{},
		unseen: map[string]time.Time{}, unseenMembers: map[string]time.Time{}}
	s.takeOver = s.takeOverCluster
	return s
}

// Serve takes what the Cluster reconciler gives at setup, and is the source of its controller's events of the
// objects the share holds: every cache of the share, present and future, with the reconciler's watches on it.
func (s *Member) Serve(r Reconciler) source.Source {
	s.reconciler = r
	return shareSource{share: s.share, watches: r.Watches}
}

// informersSynced starts the informers of kinds in c if they were not, and returns once all have synced.
func informersSynced(ctx context.Context, c cache.Cache, kinds []client.Object) error {
	for _, obj := range kinds {
		if _, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(true)); err != nil {
			return fmt.Errorf("sync the %T informer: %w", obj, err)
		}
	}
	return nil
}

// wakeCluster asks the Cluster reconciler to reconcile the Cluster now.
func (s *Member) wakeCluster(key types.NamespacedName) {
	if s.reconciler.Wake != nil {
		s.reconciler.Wake(key)
	}
}

// letGo asks the Cluster reconciler to drop what it holds of the Cluster.
func (s *Member) letGo(key types.NamespacedName) {
	if s.reconciler.LetGo != nil {
		s.reconciler.LetGo(key)
	}
}

// observedLease is another member's Lease as this replica saw it: RenewTime is when, on this replica's
// clock, it saw the Lease change last (client-go's observedTime), never the time written in it.
type observedLease struct {
	lease shard.Lease
	name  string
	rv    string
	// object is the Lease as observed (the informer's: never modified), which marking it dead updates.
	object  *coordinationv1.Lease
	written string // the renewTime and annotations last seen, to notice a renewal
}

// NewIdentity is a member name for this process: the pod name and a nonce from the start time.
func NewIdentity(pod string) string {
	return fmt.Sprintf("%s-%s", pod, strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36))
}

func (s *Member) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// NeedLeaderElection is false: every replica is a member.
func (s *Member) NeedLeaderElection() bool { return false }

func (s *Member) renewPeriod() time.Duration { return s.LeaseDuration / 3 }

// Start runs the caches of the share, joins the membership, renews the Lease, watches the others' and
// reassigns the Clusters every renewal period, until ctx ends: then it stops taking reconciles, waits for those
// in flight and releases its Lease so that the others take its Clusters over at once. It returns an error,
// which stops the process, when it finds its own Lease marked dead (it was paused or cut off for longer than
// the Lease duration). The caches of the share stop when it returns.
func (s *Member) Start(ctx context.Context) error {
	if s.share != nil {
		shareCtx, stopShare := context.WithCancel(ctx)
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			_ = s.share.Start(shareCtx) // it returns nil, once shareCtx ends
		}()
		defer func() { stopShare(); <-stopped }()
	}
	logger := log.FromContext(ctx).WithName("sharding").WithValues("member", s.Identity)
	ctx = log.IntoContext(ctx, logger)
	s.mu.Lock()
	s.logger = logger
	s.mu.Unlock()
	// A member is given Clusters as soon as it joins: one that cannot reconcile yet (a replica restarted into
	// a large fleet lists it for seconds) would hold them while the others could have taken them.
	if s.synced != nil {
		if err := s.synced(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("wait for the caches before joining the operator's members: %w", err)
		}
	}
	if err := s.join(ctx); err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(s.leaseClient, 0, informers.WithNamespace(s.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = MemberLabel + "=true" }))
	informer := factory.Coordination().V1().Leases().Informer()
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.observe(obj) },
		UpdateFunc: func(_, obj any) { s.observe(obj) },
		DeleteFunc: func(obj any) { s.forgetLease(obj) },
	}); err != nil {
		return fmt.Errorf("watch member leases: %w", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	s.mu.Lock()
	s.leasesSynced = true
	s.mu.Unlock()
	logger.Info("joined the operator's members", "leaseDuration", s.LeaseDuration)

	ticker := time.NewTicker(s.renewPeriod())
	defer ticker.Stop()
	deadCheck := time.NewTicker(s.renewPeriod() / 4)
	defer deadCheck.Stop()
	for {
		s.reassign(ctx)
		renewal, ok := s.awaitRound(ctx, ticker.C, deadCheck.C)
		if !ok {
			s.leave(logger)
			factory.Shutdown()
			return nil
		}
		if !renewal {
			continue
		}
		if err := s.renew(ctx); err != nil {
			return err
		}
		s.markExpiredDead(ctx)
		s.deleteAbandonedLeases(ctx)
	}
}

// awaitRound waits for the next assignment round: one asked for (renewal false) or the renewal tick (true).
// Meanwhile, every quarter of the renewal period, it marks dead the members whose Lease ran out, so that a
// dead member's Clusters wait for its Lease only, not for this replica's next tick; the Lease watch then asks
// for the round. ok is false once ctx ended.
func (s *Member) awaitRound(ctx context.Context, tick, deadCheck <-chan time.Time) (renewal, ok bool) {
	for {
		select {
		case <-ctx.Done():
			return false, false
		case <-s.kick:
			return false, true
		case <-tick:
			return true, true
		case <-deadCheck:
			s.markExpiredDead(ctx)
		}
	}
}
