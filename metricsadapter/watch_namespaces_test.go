package metricsadapter

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// namespacedCache answers like the manager's cache of an operator restricted by --watch-namespace: a read in
// another namespace fails with controller-runtime's "unknown namespace for the cache" error.
type namespacedCache struct {
	client.Reader
	namespace string
}

func (c namespacedCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key.Namespace != c.namespace {
		return fmt.Errorf("unable to get: %v because of unknown namespace for the cache", key)
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c namespacedCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	if o.Namespace != c.namespace {
		return fmt.Errorf("unable to list: %v because of unknown namespace for the cache", o.Namespace)
	}
	return c.Reader.List(ctx, list, opts...)
}

// An operator installed for one namespace (OLM's OwnNamespace mode) answers for another as for a namespace
// without Clusters: not found (404), never a server error (500).
func TestMetricsOfAnUnwatchedNamespaceAreNotFound(t *testing.T) {
	reader := namespacedCache{Reader: fakeReader(t, cluster("edge", 4, 7, 5)), namespace: testNamespace}
	custom, external := NewProviders(reader, true, testNamespace)
	for _, metric := range []string{UnassignedTargetsMetric, TargetsDemandMetric} {
		for _, selector := range []string{"", "cluster=edge"} {
			_, err := external.GetExternalMetric(context.Background(), "elsewhere", parseSelector(t, selector),
				provider.ExternalMetricInfo{Metric: metric})
			if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `namespace "elsewhere"`) {
				t.Errorf("%s %q in an unwatched namespace: error %v, want not found naming the namespace", metric, selector, err)
			}
		}
	}
	_, err := custom.GetMetricBySelector(context.Background(), "elsewhere", parseSelector(t, "cluster=edge"),
		provider.CustomMetricInfo{GroupResource: clustersResource, Namespaced: true, Metric: TargetsPresentMetric}, nil)
	if !apierrors.IsNotFound(err) {
		t.Errorf("custom metric in an unwatched namespace: error %v, want not found", err)
	}
	if got := externalValues(t, external, UnassignedTargetsMetric, "cluster=edge"); got["edge"] != 4 {
		t.Errorf("the watched namespace answers %v, want edge=4", got)
	}
}
