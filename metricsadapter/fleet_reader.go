package metricsadapter

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// podClusterIndex indexes cached pods by their operator.gnmic.dev/cluster label, so that a selector naming
// one Cluster reads that Cluster's pods instead of filtering every pod of the namespace.
const podClusterIndex = "metricsadapter.operator.gnmic.dev/pod-cluster"

// IndexPodsByCluster registers podClusterIndex with the manager's cache. It must run before the cache starts.
func IndexPodsByCluster(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &corev1.Pod{}, podClusterIndex, func(o client.Object) []string {
		if name, ok := o.GetLabels()[operatorv1alpha1.ClusterLabel]; ok {
			return []string{name}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index pods by label %s: %w", operatorv1alpha1.ClusterLabel, err)
	}
	return nil
}

// fleetReader reads Clusters and their collector pods from the manager's cache. Objects it returns are
// shared with the cache and must not be modified.
type fleetReader struct {
	reader client.Reader
	// podsIndexed is true when the reader knows podClusterIndex.
	podsIndexed bool
	// watched are the namespaces the reader holds; nil means every namespace.
	watched map[string]bool
}

// holds is true when the reader holds the namespace's objects: the operator watches it.
func (f fleetReader) holds(namespace string) bool { return f.watched == nil || f.watched[namespace] }

// cluster returns the named Cluster, or nil when it does not exist.
func (f fleetReader) cluster(ctx context.Context, key types.NamespacedName) (*operatorv1alpha1.Cluster, error) {
	if !f.holds(key.Namespace) {
		return nil, nil
	}
	var c operatorv1alpha1.Cluster
	if err := f.reader.Get(ctx, key, &c, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get cluster %s: %w", key, err)
	}
	return &c, nil
}

// matchingClusters returns the Clusters of a namespace a metric selector means (see chooseClusters), sorted
// by name. A selector naming Clusters reads those by name, any other lists the namespace.
func (f fleetReader) matchingClusters(ctx context.Context, namespace string, selector labels.Selector) ([]operatorv1alpha1.Cluster, error) {
	var candidates []operatorv1alpha1.Cluster
	if names, named := namedClusters(selector); named {
		candidates = make([]operatorv1alpha1.Cluster, 0, len(names))
		for _, name := range names {
			c, err := f.cluster(ctx, types.NamespacedName{Namespace: namespace, Name: name})
			if err != nil {
				return nil, err
			}
			if c != nil {
				candidates = append(candidates, *c)
			}
		}
	} else if f.holds(namespace) {
		var list operatorv1alpha1.ClusterList
		if err := f.reader.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list clusters in namespace %s: %w", namespace, err)
		}
		candidates = list.Items
	}
	return chooseClusters(namespace, selector, candidates)
}

// pod returns the named pod, or nil when it does not exist.
func (f fleetReader) pod(ctx context.Context, key types.NamespacedName) (*corev1.Pod, error) {
	if !f.holds(key.Namespace) {
		return nil, nil
	}
	var p corev1.Pod
	if err := f.reader.Get(ctx, key, &p, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get pod %s: %w", key, err)
	}
	return &p, nil
}

// pods returns the pods of a namespace that selector matches, sorted by name. A selector naming one Cluster
// reads the index and filters the labels here: the cache does not combine an index with a label selector.
func (f fleetReader) pods(ctx context.Context, namespace string, selector labels.Selector) ([]corev1.Pod, error) {
	if !f.holds(namespace) {
		return nil, nil
	}
	opts := []client.ListOption{client.InNamespace(namespace), client.UnsafeDisableDeepCopy}
	name, indexed := selector.RequiresExactMatch(operatorv1alpha1.ClusterLabel)
	indexed = indexed && f.podsIndexed
	if indexed {
		opts = append(opts, client.MatchingFields{podClusterIndex: name})
	} else {
		opts = append(opts, client.MatchingLabelsSelector{Selector: selector})
	}
	var list corev1.PodList
	if err := f.reader.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list pods in namespace %s matching %q: %w", namespace, selector, err)
	}
	pods := list.Items
	if indexed {
		pods = pods[:0:0]
		for i := range list.Items {
			if selector.Matches(labels.Set(list.Items[i].Labels)) {
				pods = append(pods, list.Items[i])
			}
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods, nil
}
