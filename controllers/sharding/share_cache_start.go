package sharding

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Starting a cache of the share: its options (what it selects and how it keeps what it selects), and what
// happens once it synced.

// startShareCache starts a cache of the kinds: of the named Clusters' objects in every namespace (whole for
// the Clusters keys names), or of everything in the namespace; with the reconciler's watches on it. s.mu
// must be held.
func (s *shareCaches) startShareCache(ctx context.Context, namespace string, clusters, keys []string, kinds []client.Object) (*shareCache, error) {
	opts, err := s.shareCacheOptions(namespace, clusters, keys)
	if err != nil {
		return nil, err
	}
	c, err := s.newCache(s.config, opts)
	if err != nil {
		return nil, fmt.Errorf("create a cache of the share: %w", err)
	}
	cacheCtx, stop := context.WithCancel(ctx)
	for _, obj := range kinds {
		if _, err := c.GetInformer(cacheCtx, obj); err != nil {
			stop()
			return nil, fmt.Errorf("inform on %T: %w", obj, err)
		}
	}
	if s.watch != nil {
		if err := s.watch(cacheCtx, c, kinds); err != nil {
			stop()
			return nil, err
		}
	}
	go func() {
		if err := c.Start(cacheCtx); err != nil {
			log.FromContext(ctx).Error(err, "a cache of the share stopped", "namespace", namespace)
		}
	}()
	return &shareCache{namespace: namespace, clusters: clusters, keys: keys, kinds: kinds, cache: c, ctx: cacheCtx, stop: stop}, nil
}

// shareCacheOptions configure a cache of the share: of the namespace (every watched namespace when none is
// named), and of the named Clusters' objects only when some are named. The selector is by name: a Cluster of
// the same name in another namespace is selected too, and its objects are kept only by what names them
// (stubOutsideShare).
func (s *shareCaches) shareCacheOptions(namespace string, clusters, keys []string) (cache.Options, error) {
	opts := cache.Options{HTTPClient: s.http, Scheme: s.scheme, Mapper: s.mapper,
		// Nothing the reconciler does reads managedFields; they are a large part of a Target.
		DefaultTransform: cache.TransformStripManagedFields(),
		// Every kind read here is started before the cache: a read of any other is a mistake, not a new informer.
		ReaderFailOnMissingInformer: true,
	}
	namespaces := s.watchNamespaces
	if namespace != "" {
		namespaces = []string{namespace}
	}
	for _, ns := range namespaces {
		if opts.DefaultNamespaces == nil {
			opts.DefaultNamespaces = map[string]cache.Config{}
		}
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	if clusters != nil {
		byCluster, err := labels.NewRequirement(operatorv1alpha1.ClusterLabel, selection.In, clusters)
		if err != nil {
			return cache.Options{}, fmt.Errorf("select the objects of Clusters %v: %w", clusters, err)
		}
		opts.DefaultLabelSelector = labels.NewSelector().Add(*byCluster)
		opts.DefaultTransform = stubOutsideShare(keys)
	}
	return opts, nil
}

// stubOutsideShare keeps whole, without managedFields, the objects of the share's Clusters (keys, sorted
// "namespace/name") and keeps of any other object only what names it: namespace, name, UID, resourceVersion,
// deletion and the Cluster label. The caches select by Cluster name, so a Cluster of the same name in another
// namespace (every team's "telemetry") is selected too; without this every replica would hold its objects.
// Such an object is never read whole: this replica reconciles only Clusters its caches cover, by key, and a
// change of the share builds a new cache.
func stubOutsideShare(keys []string) toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(in any) (any, error) {
		obj, ok := in.(client.Object)
		if !ok {
			return in, nil // a tombstone
		}
		cluster := obj.GetLabels()[operatorv1alpha1.ClusterLabel]
		if _, found := slices.BinarySearch(keys, obj.GetNamespace()+"/"+cluster); found {
			return strip(in)
		}
		stub := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
		stub.SetNamespace(obj.GetNamespace())
		stub.SetName(obj.GetName())
		stub.SetUID(obj.GetUID())
		stub.SetResourceVersion(obj.GetResourceVersion())
		stub.SetDeletionTimestamp(obj.GetDeletionTimestamp())
		stub.SetLabels(map[string]string{operatorv1alpha1.ClusterLabel: cluster})
		return stub, nil
	}
}

// serveWhenSynced makes the cache serve once it synced, unless it was stopped meanwhile, stops those it
// replaces, and wakes the Clusters it completes the cover of (those without any object yet get no event of
// their own).
func (s *shareCaches) serveWhenSynced(ctx context.Context, built *shareCache) {
	if !built.cache.WaitForCacheSync(built.ctx) {
		return // stopped: replaced, left, or the replica stops
	}
	s.mu.Lock()
	var replaced []*shareCache
	switch targets := s.namespaces[built.namespace]; {
	case built.namespace != "" && targets != nil && targets.cache == built:
		targets.synced = true
	case built.namespace == "" && slices.Contains(s.pending, built):
		s.pending = slices.DeleteFunc(s.pending, func(x *shareCache) bool { return x == built })
		replaced = built.replaces
		s.segments = slices.DeleteFunc(s.segments, func(x *shareCache) bool { return slices.Contains(replaced, x) })
		s.pending = slices.DeleteFunc(s.pending, func(x *shareCache) bool { return slices.Contains(replaced, x) })
		s.segments = append(s.segments, built)
		if s.consolidating == built {
			s.consolidating = nil
		}
	default:
		s.mu.Unlock()
		return
	}
	var covered []types.NamespacedName
	uncovered := false
	for namespace, clusters := range s.want {
		for _, name := range clusters {
			key := types.NamespacedName{Namespace: namespace, Name: name}
			switch {
			case !s.coversLocked(key):
				uncovered = uncovered || (built.namespace == "" && !s.holdsLocked(key))
			case built.namespace == namespace, built.namespace == "" && len(replaced) == 0 && built.holdsWholeKey(key):
				// Its cover is complete now: it waited for this cache. A consolidation completes none: the
				// caches it replaces covered the same Clusters.
				covered = append(covered, key)
			}
		}
	}
	s.mu.Unlock()
	for _, c := range replaced {
		c.stop()
	}
	if uncovered {
		// A Cluster that left the share before a consolidation began and came back during it: the caches
		// it replaced held it; a segment of its own does now.
		s.askToFollow()
	}
	log.FromContext(ctx).V(1).Info("a cache of the share synced", "namespace", built.namespace, "clusters", built.clusters)
	for _, key := range covered {
		s.wake(key)
	}
}

// holdsLocked is true when a cache of Cluster objects, synced or not, holds the Cluster whole. s.mu must be
// held.
func (s *shareCaches) holdsLocked(key types.NamespacedName) bool {
	return slices.ContainsFunc(slices.Concat(s.segments, s.pending), func(c *shareCache) bool { return c.holdsWholeKey(key) })
}
