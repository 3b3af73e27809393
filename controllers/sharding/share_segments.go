package sharding

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// The Cluster objects of a share live in segments: caches each holding some of the share's Clusters whole
// (shareCache.keys) and other same-named Clusters' objects by name only (stubOutsideShare). A Cluster may be
// held whole by two segments for a while (one that kept it after it left the share, and a consolidation);
// both are informers of the same objects, so either answers.

// clusterObjectCachesPlan is what the caches of Cluster objects must do to follow the share.
type clusterObjectCachesPlan struct {
	// stop are the caches none of whose Clusters is in the share any more.
	stop []*shareCache
	// build are the Clusters ("namespace/name", sorted) of the cache to start; none: no cache to start.
	build []string
	// replaces are the caches the one to build makes redundant once synced: set for a cache of the whole share.
	replaces []*shareCache
}

// planClusterObjectCaches plans the caches of Cluster objects for the share want ("namespace/name", sorted),
// given the synced segments and the pending caches: a segment of the Clusters no cache holds, or, when
// consolidate is asked or segments reach maxShareSegments and no consolidation is under way, a cache of the
// whole share that replaces the others.
func planClusterObjectCaches(want []string, segments, pending []*shareCache, consolidating, consolidate bool) clusterObjectCachesPlan {
	var plan clusterObjectCachesPlan
	var kept []*shareCache
	held := map[string]bool{}
	for _, c := range slices.Concat(segments, pending) {
		wanted := false
		for _, key := range c.keys {
			if _, found := slices.BinarySearch(want, key); found {
				wanted = true
				held[key] = true
			}
		}
		if wanted {
			kept = append(kept, c)
		} else {
			plan.stop = append(plan.stop, c)
		}
	}
	if len(want) == 0 {
		return plan
	}
	var gained []string
	for _, key := range want {
		if !held[key] {
			gained = append(gained, key)
		}
	}
	if !consolidating && (consolidate || (len(gained) > 0 && len(kept) >= maxShareSegments)) {
		plan.build, plan.replaces = slices.Clone(want), kept
	} else {
		plan.build = gained
	}
	return plan
}

// clusterNames are the names of the Clusters keys ("namespace/name") name, sorted, once each: a cache's
// label selector.
func clusterNames(keys []string) []string {
	var names []string
	for _, key := range keys {
		_, name, _ := strings.Cut(key, "/")
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// holdsWhole is true when the cache holds obj whole: obj belongs to one of its Clusters.
func (c *shareCache) holdsWhole(obj client.Object) bool {
	return c.holdsWholeKey(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetLabels()[operatorv1alpha1.ClusterLabel]})
}

// holdsWholeKey is true when the Cluster is one of the cache's.
func (c *shareCache) holdsWholeKey(cluster types.NamespacedName) bool {
	_, found := slices.BinarySearch(c.keys, cluster.String())
	return found
}

// segmentReader reads the Cluster objects of the share from its synced segments: an object from a segment
// that holds it whole, each object once.
type segmentReader []*shareCache

func (r segmentReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	var notFound error
	for _, segment := range slices.Backward(r) {
		err := segment.cache.Get(ctx, key, obj, opts...)
		switch {
		case apierrors.IsNotFound(err):
			notFound = err
		case err != nil:
			return err
		case segment.holdsWhole(obj):
			return nil
		}
	}
	if notFound == nil { // only other Clusters' objects of that name
		notFound = apierrors.NewNotFound(schema.GroupResource{Resource: fmt.Sprintf("%T", obj)}, key.Name)
	}
	return notFound
}

func (r segmentReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	newestFirst := make([]client.Reader, len(r))
	for i, segment := range r {
		newestFirst[len(r)-1-i] = segment.cache
	}
	seen := map[string]bool{}
	return listEach(ctx, list, newestFirst, func(i int, obj client.Object) bool {
		key := obj.GetNamespace() + "/" + obj.GetName()
		if seen[key] || !r[len(r)-1-i].holdsWhole(obj) {
			return false
		}
		seen[key] = true
		return true
	}, opts...)
}
