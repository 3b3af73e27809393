package controllers

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// Labels and annotations of the member Leases of a sharded operator (docs/sharding.md).
const (
	// ShardMemberLabel marks the Lease of one operator replica.
	ShardMemberLabel = "operator.gnmic.dev/shard-member"
	// shardLeavingAnnotation is set by a replica that shuts down: it drains and takes nothing new.
	shardLeavingAnnotation = "operator.gnmic.dev/leaving"
	// shardDeadAnnotation is set by a replica that released its Lease, or by another replica, with a
	// conditional update, once the Lease expired. A dead Lease is never renewed again.
	shardDeadAnnotation = "operator.gnmic.dev/dead"
	// shardPodAnnotation names the pod of the member that holds the Lease, when it knows it (POD_NAME).
	shardPodAnnotation = "operator.gnmic.dev/pod"
)

// Sharding makes the replicas of the operator share the Clusters: each replica renews one Lease, every
// replica assigns the Clusters over the live Leases with internal/shard, and the Cluster reconciler reconciles
// only what internal/shard.Decide lets it (cluster_shard.go). It is a manager runnable on every replica.
type Sharding struct {
	// Leases reads and writes the member Leases; Clusters reads Clusters (the manager's cache).
	Leases   kubernetes.Interface
	Clusters client.Reader
	// Namespace holds the member Leases: the operator's namespace.
	Namespace string
	// Identity is this process's member name: its pod name and a nonce, unique per process lifetime.
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
	// replaces the caches of the Clusters it gained one batch at a time (shard_cache.go); zero means 30 s.
	ConsolidateAfter time.Duration
	// ReadyWithin is how long after joining a replica that does not hold its share yet becomes ready anyway
	// (HoldsShare); zero means shareReadyWithin.
	ReadyWithin time.Duration

	wakes chan event.GenericEvent
	// share caches the objects of the Clusters this replica owns or takes over (shard_cache.go).
	share *shareCaches
	// ready returns once the informers the Cluster controller reads from the manager's cache have synced
	// (nil: at once); the member joins only then.
	ready func(context.Context) error
	// takeOver, when set, records this replica as a Cluster's owner (ClusterReconciler.takeOver). The
	// assignment round runs it for every Cluster to take over, beside the reconciles: a dead member's Clusters
	// then do not wait behind the queue of regular reconciles. Nil leaves takeovers to the reconciles.
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
	// leasesSynced is true once the watch of the member Leases has listed them all: only then does an owner
	// count as unseen.
	leasesSynced bool
	// joined is when this replica joined the members; rounds counts its assignment rounds; assignedSelf are
	// the Clusters the last round gave it, notTakenOver how many of them it did not reconcile yet; heldShare
	// latches once it held them all, cached (HoldsShare, shard_readiness.go).
	joined       time.Time
	rounds       int
	assignedSelf []types.NamespacedName
	notTakenOver int
	heldShare    bool
	// logger is Start's, for what HoldsShare reports.
	logger logr.Logger
	kick   chan struct{} // asks for a round before the next tick
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

// NewShardMemberIdentity is a member name for this process: the pod name and a nonce from the start time.
func NewShardMemberIdentity(pod string) string {
	return fmt.Sprintf("%s-%s", pod, strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36))
}

func (s *Sharding) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// init prepares the channels before either the manager or the reconciler uses them.
func (s *Sharding) init() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wakes == nil {
		s.wakes = make(chan event.GenericEvent, 1024)
		s.kick = make(chan struct{}, 1)
		s.leases = map[string]observedLease{}
		s.desired = map[string]string{}
		s.takingOver = map[string]bool{}
		s.unseen = map[string]time.Time{}
	}
}

// Wakes are the Clusters whose decision may have changed: the Cluster controller watches them.
func (s *Sharding) Wakes() <-chan event.GenericEvent {
	s.init()
	return s.wakes
}

// NeedLeaderElection is false: every replica is a member.
func (s *Sharding) NeedLeaderElection() bool { return false }

func (s *Sharding) renewPeriod() time.Duration { return s.LeaseDuration / 3 }

// Start joins the membership, renews the Lease, watches the others' and reassigns the Clusters every renewal
// period, until ctx ends: then it stops taking reconciles, waits for those in flight and releases its Lease so
// that the others take its Clusters over at once. It returns an error, which stops the process, when it finds
// its own Lease marked dead (it was paused or cut off for longer than the Lease duration).
func (s *Sharding) Start(ctx context.Context) error {
	s.init()
	logger := log.FromContext(ctx).WithName("sharding").WithValues("member", s.Identity)
	ctx = log.IntoContext(ctx, logger)
	s.mu.Lock()
	s.logger = logger
	s.mu.Unlock()
	// A member is given Clusters as soon as it joins: one that cannot reconcile yet (a replica restarted into
	// a large fleet lists it for seconds) would hold them while the others could have taken them.
	if s.ready != nil {
		if err := s.ready(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("wait for the caches before joining the operator's members: %w", err)
		}
	}
	if err := s.join(ctx); err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(s.Leases, 0, informers.WithNamespace(s.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = ShardMemberLabel + "=true" }))
	informer := factory.Coordination().V1().Leases().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
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
func (s *Sharding) awaitRound(ctx context.Context, tick, deadCheck <-chan time.Time) (renewal, ok bool) {
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

// join creates this process's Lease; its identity is new, so none exists.
func (s *Sharding) join(ctx context.Context) error {
	sent := s.now()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.Identity, Namespace: s.Namespace,
			Labels: map[string]string{ShardMemberLabel: "true", "app.kubernetes.io/name": "gnmic-operator"},
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
	created, err := s.Leases.CoordinationV1().Leases(s.Namespace).Create(ctx, lease, metav1.CreateOptions{})
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
func (s *Sharding) renew(ctx context.Context) error {
	leases := s.Leases.CoordinationV1().Leases(s.Namespace)
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
func (s *Sharding) renewed(updated *coordinationv1.Lease, sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.self.RenewTime = sent
	s.written = updated
}

// observe records another member's Lease, with the time this replica saw it change.
func (s *Sharding) observe(obj any) {
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
func (s *Sharding) askForRound() {
	select {
	case s.kick <- struct{}{}:
	default: // one is already asked for
	}
}

func (s *Sharding) forgetLease(obj any) {
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
func (s *Sharding) allLeases() []shard.Lease {
	out := []shard.Lease{s.self}
	for _, o := range s.leases {
		out = append(out, o.lease)
	}
	return out
}

// markExpiredDead marks dead, with a conditional update on the version judged expired, the Leases of members
// that stopped renewing: only then may their Clusters be taken over.
func (s *Sharding) markExpiredDead(ctx context.Context) {
	s.mu.Lock()
	self := s.self
	var expired []observedLease
	for _, o := range s.leases {
		if shard.MayMarkDead(self, o.lease, s.now()) {
			expired = append(expired, o)
		}
	}
	s.mu.Unlock()
	leases := s.Leases.CoordinationV1().Leases(s.Namespace)
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
func (s *Sharding) MarkPredecessorsDead(ctx context.Context) {
	if s.Pod == "" {
		return
	}
	// Bounded: the operator's start waits for it.
	ctx, cancel := context.WithTimeout(ctx, s.LeaseDuration)
	defer cancel()
	leases := s.Leases.CoordinationV1().Leases(s.Namespace)
	list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: ShardMemberLabel + "=true"})
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
func (s *Sharding) deleteAbandonedLeases(ctx context.Context) {
	var clusters operatorv1alpha1.ClusterList
	// Read only: the cache's objects need no copy.
	if err := s.Clusters.List(ctx, &clusters, client.UnsafeDisableDeepCopy); err != nil {
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
		err := s.Leases.CoordinationV1().Leases(s.Namespace).Delete(ctx, o.name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To(o.rv)}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			log.FromContext(ctx).Error(err, "delete a dead member lease", "lease", o.name)
		}
	}
}

// leave stops taking reconciles, waits (a bounded time) for those in flight, and releases the Lease.
func (s *Sharding) leave(logger interface {
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
	leases := s.Leases.CoordinationV1().Leases(s.Namespace)
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
