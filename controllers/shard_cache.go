package controllers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// A sharded replica caches the objects of its share only (docs/sharding.md, "What each replica caches"): the
// objects its Clusters own (selected by operator.gnmic.dev/cluster) and the Targets of their namespaces. It
// holds one small controller-runtime cache per namespace where it owns (or is taking over) a Cluster, each
// selecting `operator.gnmic.dev/cluster in (<those Clusters>)`. Objects carry their Cluster's name, not its
// namespace, so a cluster-wide selector by name would hold every namespace's Cluster of that name: per
// namespace, it holds exactly the share. When the share of a namespace changes, a cache with the new
// selector is built, started and synced, then swapped in, and the old one stopped; the others are untouched.
//
// Invariant: shareCaches.covers(c) is true only once a synced cache holds every object of Cluster c, and
// the reconciler reconciles c only then (cluster_shard.go): a cache missing a Cluster's StatefulSet and Pods
// would make it re-place every target.

// shareSettle is how long the share must stay unchanged before the caches follow it: a replica that takes
// over many Clusters one by one in one namespace builds one cache for them, not one each.
const shareSettle = 200 * time.Millisecond

// shareKinds are the kinds served from the share's caches. Cluster-owned kinds are selected by Cluster;
// Targets are selected by Pipelines' label selectors (no label names their Cluster), so a share holds its
// namespaces' Targets whole.
func shareKinds() []client.Object {
	return []client.Object{&corev1.Pod{}, &corev1.ConfigMap{}, &corev1.Service{}, &appsv1.StatefulSet{},
		&policyv1.PodDisruptionBudget{}, &networkingv1.NetworkPolicy{}, &operatorv1alpha1.Target{}}
}

// shareCaches holds the caches of this replica's share, one per namespace. It is a manager runnable.
type shareCaches struct {
	config *rest.Config
	http   *http.Client
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	// kinds are the GroupVersionKinds of shareKinds, and of their lists, that reads route here.
	kinds map[string]bool
	// wake asks the reconciler to look at a Cluster whose cache just synced.
	wake func(types.NamespacedName)

	changed chan struct{}

	mu sync.Mutex
	// want is the share: the names of the Clusters this replica owns or takes over, by namespace.
	want       map[string][]string
	namespaces map[string]*namespaceShare
	// watch registers the reconciler's event handlers on a new cache; nil until the controller starts.
	watch func(ctx context.Context, c cache.Cache) error
}

// namespaceShare is one namespace's cache: the one serving reads and, while the share changes, the one
// being built to replace it.
type namespaceShare struct {
	serving, building *clusterObjectCache
}

// clusterObjectCache is a started cache of the named Clusters' objects in one namespace.
type clusterObjectCache struct {
	namespace string
	clusters  []string // sorted
	cache     cache.Cache
	// ctx ends when the cache stops.
	ctx  context.Context
	stop context.CancelFunc
}

func newShareCaches(config *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, mapper meta.RESTMapper,
	wake func(types.NamespacedName)) (*shareCaches, error) {
	s := &shareCaches{config: config, http: httpClient, scheme: scheme, mapper: mapper, wake: wake,
		kinds: map[string]bool{}, changed: make(chan struct{}, 1), want: map[string][]string{},
		namespaces: map[string]*namespaceShare{}}
	for _, obj := range shareKinds() {
		gvk, err := clientGVK(scheme, obj)
		if err != nil {
			return nil, err
		}
		s.kinds[gvk.GroupKind().String()] = true
		s.kinds[schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind + "List"}.String()] = true
	}
	return s, nil
}

// NeedLeaderElection is false: every sharded replica holds its own share.
func (s *shareCaches) NeedLeaderElection() bool { return false }

// Start follows the share until ctx ends, then stops every cache.
func (s *shareCaches) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			s.stopAll()
			return nil
		case <-s.changed:
		}
		select {
		case <-ctx.Done():
			s.stopAll()
			return nil
		case <-time.After(shareSettle):
		}
		s.follow(ctx)
	}
}

// setShare records the Clusters this replica owns or takes over; the caches follow shortly after.
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
	s.want = want
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// covers is true when a synced cache holds every object of the Cluster.
func (s *shareCaches) covers(key types.NamespacedName) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespaces[key.Namespace]
	if ns == nil || ns.serving == nil {
		return false
	}
	_, found := slices.BinarySearch(ns.serving.clusters, key.Name)
	return found
}

// serving is the synced cache of the namespace, or nil.
func (s *shareCaches) serving(namespace string) cache.Cache {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ns := s.namespaces[namespace]; ns != nil && ns.serving != nil {
		return ns.serving.cache
	}
	return nil
}

// allServing are the synced caches of every namespace.
func (s *shareCaches) allServing() []cache.Cache {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []cache.Cache
	for _, ns := range s.namespaces {
		if ns.serving != nil {
			out = append(out, ns.serving.cache)
		}
	}
	return out
}

// follow builds a cache for every namespace whose share changed and stops those of namespaces left.
func (s *shareCaches) follow(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for namespace, clusters := range s.want {
		ns := s.namespaces[namespace]
		if ns == nil {
			ns = &namespaceShare{}
			s.namespaces[namespace] = ns
		}
		latest := ns.building
		if latest == nil {
			latest = ns.serving
		}
		if latest != nil && slices.Equal(latest.clusters, clusters) {
			continue
		}
		built, err := s.startClusterObjectCache(ctx, namespace, clusters)
		if err != nil {
			log.FromContext(ctx).Error(err, "cache the share of a namespace; its Clusters wait", "namespace", namespace)
			continue
		}
		if ns.building != nil {
			ns.building.stop()
		}
		ns.building = built
		go s.swapWhenSynced(ctx, built)
	}
	for namespace, ns := range s.namespaces {
		if _, kept := s.want[namespace]; kept {
			continue
		}
		for _, c := range []*clusterObjectCache{ns.serving, ns.building} {
			if c != nil {
				c.stop()
			}
		}
		delete(s.namespaces, namespace)
	}
}

// startClusterObjectCache starts a cache of the Clusters' objects and their namespace's Targets, with the
// reconciler's watches on it. s.mu must be held.
func (s *shareCaches) startClusterObjectCache(ctx context.Context, namespace string, clusters []string) (*clusterObjectCache, error) {
	byCluster, err := labels.NewRequirement(operatorv1alpha1.ClusterLabel, selection.In, clusters)
	if err != nil {
		return nil, fmt.Errorf("select the objects of Clusters %v: %w", clusters, err)
	}
	owned := cache.ByObject{Label: labels.NewSelector().Add(*byCluster)}
	byObject := map[client.Object]cache.ByObject{}
	for _, obj := range shareKinds() {
		if _, isTarget := obj.(*operatorv1alpha1.Target); !isTarget {
			byObject[obj] = owned
		}
	}
	c, err := cache.New(s.config, cache.Options{
		HTTPClient: s.http, Scheme: s.scheme, Mapper: s.mapper,
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		ByObject:          byObject,
		// Nothing the reconciler does reads managedFields; they are a large part of a Target.
		DefaultTransform: cache.TransformStripManagedFields(),
		// Every kind read here is started below: a read of any other is a mistake, not a new informer.
		ReaderFailOnMissingInformer: true,
	})
	if err != nil {
		return nil, fmt.Errorf("create the cache of namespace %s: %w", namespace, err)
	}
	cacheCtx, stop := context.WithCancel(ctx)
	for _, obj := range shareKinds() {
		if _, err := c.GetInformer(cacheCtx, obj); err != nil {
			stop()
			return nil, fmt.Errorf("inform on %T in namespace %s: %w", obj, namespace, err)
		}
	}
	if s.watch != nil {
		if err := s.watch(cacheCtx, c); err != nil {
			stop()
			return nil, err
		}
	}
	go func() {
		if err := c.Start(cacheCtx); err != nil {
			log.FromContext(ctx).Error(err, "cache of the share stopped", "namespace", namespace)
		}
	}()
	return &clusterObjectCache{namespace: namespace, clusters: clusters, cache: c, ctx: cacheCtx, stop: stop}, nil
}

// swapWhenSynced makes the cache serve its namespace once it synced, unless a newer one replaced it
// meanwhile, stops the one it replaces, and wakes its Clusters (those without any object yet get no event).
func (s *shareCaches) swapWhenSynced(ctx context.Context, built *clusterObjectCache) {
	if !built.cache.WaitForCacheSync(ctx) {
		return // stopped: replaced, left, or the replica stops
	}
	s.mu.Lock()
	ns := s.namespaces[built.namespace]
	if ns == nil || ns.building != built {
		s.mu.Unlock()
		return
	}
	replaced := ns.serving
	ns.serving, ns.building = built, nil
	s.mu.Unlock()
	if replaced != nil {
		replaced.stop()
	}
	log.FromContext(ctx).V(1).Info("caching the share of a namespace", "namespace", built.namespace, "clusters", built.clusters)
	for _, name := range built.clusters {
		s.wake(types.NamespacedName{Namespace: built.namespace, Name: name})
	}
}

// watchWith registers the reconciler's event handlers on every cache, present and future.
func (s *shareCaches) watchWith(watch func(ctx context.Context, c cache.Cache) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watch = watch
	for _, ns := range s.namespaces {
		for _, c := range []*clusterObjectCache{ns.serving, ns.building} {
			if c == nil {
				continue
			}
			if err := watch(c.ctx, c.cache); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *shareCaches) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for namespace, ns := range s.namespaces {
		for _, c := range []*clusterObjectCache{ns.serving, ns.building} {
			if c != nil {
				c.stop()
			}
		}
		delete(s.namespaces, namespace)
	}
}

// routes is true for the kinds (and their lists) served from the share.
func (s *shareCaches) routes(obj runtime.Object) bool {
	gvk, err := clientGVK(s.scheme, obj)
	return err == nil && s.kinds[gvk.GroupKind().String()]
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

// clusterWake is a Cluster to reconcile, as the Sharding wakes carry it.
func clusterWake(key types.NamespacedName) event.GenericEvent {
	return event.GenericEvent{Object: &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
}
