package sharding

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// A sharded replica caches the objects of its share only (docs/sharding.md, "What each replica caches"): the
// objects its Clusters own and the Targets of their namespaces, in small controller-runtime caches of its
// own:
//   - caches ("segments") across namespaces of the objects of the Clusters of the share, each selected by
//     `operator.gnmic.dev/cluster in (<their names>)`. Clusters the share gains get a segment of their own,
//     built, started and synced beside the others: a takeover storm lists only what moves, not the whole
//     share again (share_segments.go). A segment whose Clusters all left is stopped; once the share has
//     been quiet for shareConsolidateAfter, or segments reach maxShareSegments, one cache of the whole share
//     replaces them, so memory follows the share. Objects carry their Cluster's name, not its namespace: a
//     Cluster of the same name in another namespace comes along, kept only by name (stubOutsideShare);
//   - per namespace of the share, one cache of its Targets (Pipelines select them by label selector; no label
//     names their Cluster), kept while the namespace is in the share and for shareConsolidateAfter after it
//     left: a rolling update moves a Cluster more than once, and its namespace is listed once.
//
// Why not a cache per namespace for everything: an informer costs about 84 KiB of heap and a dozen
// goroutines (measured against kube-apiserver), more than a Cluster's few owned objects weigh, but less than
// a namespace's Targets do.
//
// Invariant: shareCaches.covers(c) is true only once synced caches hold every object of Cluster c and every
// Target of its namespace, and the reconciler reconciles c only then (Member.Turn): a cache missing a
// Cluster's StatefulSet and Pods would make it re-place every target.

// shareSettle is how long the share must stay unchanged before the caches follow it: a replica that takes
// over many Clusters one by one builds one cache for them, not one each.
const shareSettle = 200 * time.Millisecond

// shareConsolidateAfter is how long the share must stay unchanged before one cache of the whole share
// replaces its segments; maxShareSegments is how many segments (synced or not) a share holds before a change
// builds one of the whole share instead of another segment.
const (
	shareConsolidateAfter = 30 * time.Second
	maxShareSegments      = 8
)

// shareCaches holds the caches of this replica's share. It is a manager runnable.
type shareCaches struct {
	config *rest.Config
	http   *http.Client
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	// kinds are what the caches hold; clusterObjects and targets are the GroupKinds of kinds.Owned and
	// kinds.PerNamespace, and of their lists: the reads that route here.
	kinds                   Kinds
	clusterObjects, targets map[string]bool
	// wake asks the reconciler to look at a Cluster whose caches just synced.
	wake func(types.NamespacedName)
	// watchNamespaces are the namespaces the operator watches (--watch-namespace); none means all. The
	// cache of the Cluster objects, selected by name across namespaces, stays within them: an install that
	// OLM grants only some namespaces may list nothing beyond.
	watchNamespaces []string
	// consolidateAfter is how long the share must stay unchanged before one cache of the whole share
	// replaces its segments.
	consolidateAfter time.Duration
	// newCache makes each cache (Options.NewCache).
	newCache cache.NewCacheFunc

	changed chan struct{}

	mu sync.Mutex
	// want is the share: the names of the Clusters this replica owns or takes over, by namespace.
	want map[string][]string
	// segments serve the Cluster objects of the share, newest last; pending are started and not synced yet.
	// consolidating, when set, is the pending cache of the whole share that replaces the others once synced.
	segments, pending []*shareCache
	consolidating     *shareCache
	// namespaces hold the Targets of each namespace of the share.
	namespaces map[string]*namespaceTargets
	// watch registers the reconciler's event handlers on a new cache; nil until the controller starts.
	watch func(ctx context.Context, c cache.Cache, kinds []client.Object) error
}

// namespaceTargets is the cache of one namespace's Targets.
type namespaceTargets struct {
	cache  *shareCache
	synced bool
	// left is when the namespace left the share; zero while in it. Its cache is kept for consolidateAfter.
	left time.Time
}

// shareCache is a started cache of some kinds: of the named Clusters' objects in every namespace, or (no
// Clusters) of all the objects of one namespace.
type shareCache struct {
	namespace string
	clusters  []string // sorted
	// keys are the share's Clusters as "namespace/name", sorted: the objects this cache holds whole.
	keys  []string
	kinds []client.Object
	cache cache.Cache
	// ctx ends when the cache stops.
	ctx  context.Context
	stop context.CancelFunc
	// replaces are the caches this one makes redundant once synced (a consolidation's).
	replaces []*shareCache
}

func newShareCaches(config *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, mapper meta.RESTMapper,
	kinds Kinds, wake func(types.NamespacedName)) (*shareCaches, error) {
	s := &shareCaches{config: config, http: httpClient, scheme: scheme, mapper: mapper, kinds: kinds, wake: wake,
		consolidateAfter: shareConsolidateAfter, newCache: cache.New, changed: make(chan struct{}, 1), want: map[string][]string{}, namespaces: map[string]*namespaceTargets{}}
	var err error
	if s.clusterObjects, err = groupKindsOf(scheme, kinds.Owned); err != nil {
		return nil, err
	}
	if s.targets, err = groupKindsOf(scheme, kinds.PerNamespace); err != nil {
		return nil, err
	}
	return s, nil
}

// groupKindsOf are the GroupKinds of the objects and of their lists.
func groupKindsOf(scheme *runtime.Scheme, objs []client.Object) (map[string]bool, error) {
	out := map[string]bool{}
	for _, obj := range objs {
		gvk, err := clientGVK(scheme, obj)
		if err != nil {
			return nil, err
		}
		out[gvk.GroupKind().String()] = true
		out[schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind + "List"}.String()] = true
	}
	return out, nil
}

// NeedLeaderElection is false: every sharded replica holds its own share.
func (s *shareCaches) NeedLeaderElection() bool { return false }

// Start follows the share until ctx ends, then stops every cache. Once the share has been quiet for
// consolidateAfter, one cache of the whole share replaces the segments.
func (s *shareCaches) Start(ctx context.Context) error {
	defer s.stopAll()
	var consolidate <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-consolidate:
			consolidate = nil
			s.mu.Lock()
			s.stopTargetsLeft(time.Now(), 0) // quiet: the Targets of every namespace that left go
			switch {
			case s.needsConsolidation():
				s.followClusterObjects(ctx, true)
			case len(s.pending) > 0 && s.consolidating == nil:
				consolidate = time.After(s.consolidateAfter) // look again once they synced
			}
			s.mu.Unlock()
			continue
		case <-s.changed:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(shareSettle):
		}
		s.follow(ctx)
		consolidate = time.After(s.consolidateAfter)
	}
}

// setShare records the Clusters this replica owns or takes over; the caches follow shortly after it changed.
func (s *shareCaches) setShare(clusters []types.NamespacedName) {
	want := map[string][]string{}
	for _, c := range clusters {
		want[c.Namespace] = append(want[c.Namespace], c.Name)
	}
	for ns := range want {
		slices.Sort(want[ns])
		want[ns] = slices.Compact(want[ns])
	}
	s.mu.Lock()
	changed := !maps.EqualFunc(s.want, want, slices.Equal)
	s.want = want
	s.mu.Unlock()
	if changed {
		// Only a change: every assignment round sets the share, and a share that stays put must let the
		// quiet period before a consolidation run out.
		s.askToFollow()
	}
}

// shareKeys are the Clusters of the share as "namespace/name", sorted. s.mu must be held.
func (s *shareCaches) shareKeys() []string {
	var keys []string
	for namespace, clusters := range s.want {
		for _, name := range clusters {
			keys = append(keys, namespace+"/"+name)
		}
	}
	slices.Sort(keys)
	return keys
}

// covers is true when synced caches hold every object of the Cluster and the Targets of its namespace.
func (s *shareCaches) covers(key types.NamespacedName) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.coversLocked(key)
}

func (s *shareCaches) coversLocked(key types.NamespacedName) bool {
	targets := s.namespaces[key.Namespace]
	if targets == nil || !targets.synced {
		return false
	}
	return slices.ContainsFunc(s.segments, func(segment *shareCache) bool { return segment.holdsWholeKey(key) })
}

// reader is the synced cache that serves obj's kind in the namespace, or nil: none does (yet).
func (s *shareCaches) reader(obj runtime.Object, namespace string) client.Reader {
	gk, ok := s.groupKind(obj)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clusterObjects[gk] {
		if len(s.segments) == 0 {
			return nil
		}
		return segmentReader(slices.Clone(s.segments))
	}
	if targets := s.namespaces[namespace]; targets != nil && targets.synced {
		return targets.cache.cache
	}
	return nil
}

// readers are the synced caches that serve obj's kind in every namespace of the share.
func (s *shareCaches) readers(obj runtime.Object) []client.Reader {
	gk, ok := s.groupKind(obj)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []client.Reader
	if s.clusterObjects[gk] {
		if len(s.segments) > 0 {
			out = append(out, segmentReader(slices.Clone(s.segments)))
		}
		return out
	}
	for _, targets := range s.namespaces {
		if targets.synced && targets.left.IsZero() {
			out = append(out, targets.cache.cache)
		}
	}
	return out
}

// follow starts the caches the share needs now and stops those it no longer needs.
func (s *shareCaches) follow(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for namespace := range s.want {
		if s.namespaces[namespace] != nil {
			continue
		}
		targets, err := s.startShareCache(ctx, namespace, nil, nil, s.kinds.PerNamespace)
		if err != nil {
			log.FromContext(ctx).Error(err, "cache the Targets of a namespace; its Clusters wait", "namespace", namespace)
			continue
		}
		s.namespaces[namespace] = &namespaceTargets{cache: targets}
		go s.serveWhenSynced(ctx, targets)
	}
	s.stopTargetsLeft(time.Now(), s.consolidateAfter)

	s.followClusterObjects(ctx, false)
}

// followClusterObjects starts the caches of Cluster objects the share needs now (a segment of the Clusters it
// gained, or, consolidate or at maxShareSegments, one of the whole share) and stops those it no longer needs.
// s.mu must be held.
func (s *shareCaches) followClusterObjects(ctx context.Context, consolidate bool) {
	plan := planClusterObjectCaches(s.shareKeys(), s.segments, s.pending, s.consolidating != nil, consolidate)
	for _, c := range plan.stop {
		c.stop()
		s.segments = slices.DeleteFunc(s.segments, func(x *shareCache) bool { return x == c })
		s.pending = slices.DeleteFunc(s.pending, func(x *shareCache) bool { return x == c })
		if s.consolidating == c {
			s.consolidating = nil
		}
	}
	if len(plan.build) == 0 {
		return
	}
	built, err := s.startShareCache(ctx, "", clusterNames(plan.build), plan.build, s.kinds.Owned)
	if err != nil {
		log.FromContext(ctx).Error(err, "cache the objects of the share's Clusters; they wait")
		return
	}
	built.replaces = plan.replaces
	if len(plan.replaces) > 0 {
		s.consolidating = built
	}
	s.pending = append(s.pending, built)
	go s.serveWhenSynced(ctx, built)
}

// needsConsolidation is true when the caches of Cluster objects hold more than the share needs: more than one
// segment, or a segment with Clusters that left. s.mu must be held.
func (s *shareCaches) needsConsolidation() bool {
	if s.consolidating != nil || len(s.pending) > 0 {
		return false
	}
	if len(s.segments) > 1 {
		return true
	}
	want := s.shareKeys()
	for _, segment := range s.segments {
		for _, key := range segment.keys {
			if _, found := slices.BinarySearch(want, key); !found {
				return true
			}
		}
	}
	return false
}

// askToFollow makes the caches follow the share again shortly.
func (s *shareCaches) askToFollow() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// watchWith registers the reconciler's event handlers on every cache, present and future.
func (s *shareCaches) watchWith(watch func(ctx context.Context, c cache.Cache, kinds []client.Object) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watch = watch
	started := slices.Concat(s.segments, s.pending)
	for _, targets := range s.namespaces {
		started = append(started, targets.cache)
	}
	for _, c := range started {
		if c == nil {
			continue
		}
		if err := watch(c.ctx, c.cache, c.kinds); err != nil {
			return err
		}
	}
	return nil
}

func (s *shareCaches) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range slices.Concat(s.segments, s.pending) {
		c.stop()
	}
	s.segments, s.pending, s.consolidating = nil, nil, nil
	for namespace, targets := range s.namespaces {
		targets.cache.stop()
		delete(s.namespaces, namespace)
	}
}

// routes is true for the kinds (and their lists) served from the share.
func (s *shareCaches) routes(obj runtime.Object) bool {
	_, ok := s.groupKind(obj)
	return ok
}

// groupKind is the GroupKind of obj when the share serves it.
func (s *shareCaches) groupKind(obj runtime.Object) (string, bool) {
	gvk, err := clientGVK(s.scheme, obj)
	if err != nil {
		return "", false
	}
	gk := gvk.GroupKind().String()
	return gk, s.clusterObjects[gk] || s.targets[gk]
}

// clientGVK is the object's kind as the scheme knows it; a PartialObjectMetadata carries its own.
func clientGVK(scheme *runtime.Scheme, obj runtime.Object) (schema.GroupVersionKind, error) {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return schema.GroupVersionKind{}, fmt.Errorf("metadata-only reads are not routed")
	}
	kinds, _, err := scheme.ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return schema.GroupVersionKind{}, fmt.Errorf("kind of %T: %w", obj, err)
	}
	return kinds[0], nil
}
