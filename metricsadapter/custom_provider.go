package metricsadapter

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

var (
	podsResource     = schema.GroupResource{Resource: "pods"}
	clustersResource = schema.GroupResource{Group: operatorv1alpha1.GroupVersion.Group, Resource: "clusters"}
)

// CustomProvider serves gnmic_targets_present on pods and on Clusters from the manager's cache.
type CustomProvider struct {
	fleet fleetReader
	now   func() time.Time
}

var _ provider.CustomMetricsProvider = (*CustomProvider)(nil)

// ListAllMetrics lists gnmic_targets_present on pods and on clusters.operator.gnmic.dev, both namespaced.
func (p *CustomProvider) ListAllMetrics() []provider.CustomMetricInfo {
	return []provider.CustomMetricInfo{
		{GroupResource: podsResource, Namespaced: true, Metric: TargetsPresentMetric},
		{GroupResource: clustersResource, Namespaced: true, Metric: TargetsPresentMetric},
	}
}

// GetMetricByName answers for one pod (the targets it acknowledged) or one Cluster (the sum over its pods).
// A pod that does not exist holds no target: its value is 0. A Cluster that does not exist is a NotFound
// error: an HPA naming it (an Object metric) must not read 0 and scale down.
func (p *CustomProvider) GetMetricByName(ctx context.Context, name types.NamespacedName, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValue, error) {
	if err := p.check(info); err != nil {
		return nil, err
	}
	if info.GroupResource == clustersResource {
		cluster, err := p.fleet.cluster(ctx, name)
		if err != nil {
			return nil, err
		}
		if cluster == nil {
			return nil, apierrors.NewNotFound(clustersResource, name.Name)
		}
		v := p.value(clusterReference(name.Namespace, name.Name), clusterTargetsPresent(cluster))
		return &v, nil
	}
	pod, err := p.fleet.pod(ctx, name)
	if err != nil {
		return nil, err
	}
	var targets int64
	if pod != nil {
		values, err := p.fleet.podTargets(ctx, []corev1.Pod{*pod})
		if err != nil {
			return nil, err
		}
		targets = values[0]
	}
	v := p.value(podReference(name.Namespace, name.Name), targets)
	return &v, nil
}

// GetMetricBySelector answers one value for every pod (or Cluster) the label selector matches, 0 for those
// holding no target. Clusters are selected as external metrics select them (their own labels plus
// cluster=<name>; a NotFound error when none matches). When no pod matches it still answers one item of
// value 0, with an empty name: an empty list would be an error for the autoscaler.
func (p *CustomProvider) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
	if err := p.check(info); err != nil {
		return nil, err
	}
	if selector == nil {
		selector = labels.Everything()
	}
	var items []custom_metrics.MetricValue
	if info.GroupResource == clustersResource {
		clusters, err := p.fleet.matchingClusters(ctx, namespace, selector)
		if err != nil {
			return nil, err
		}
		items = make([]custom_metrics.MetricValue, 0, len(clusters))
		for i := range clusters {
			items = append(items, p.value(clusterReference(namespace, clusters[i].Name), clusterTargetsPresent(&clusters[i])))
		}
		return &custom_metrics.MetricValueList{Items: items}, nil
	}
	pods, err := p.fleet.pods(ctx, namespace, selector)
	if err != nil {
		return nil, err
	}
	values, err := p.fleet.podTargets(ctx, pods)
	if err != nil {
		return nil, err
	}
	items = make([]custom_metrics.MetricValue, 0, len(pods))
	for i := range pods {
		items = append(items, p.value(podReference(namespace, pods[i].Name), values[i]))
	}
	if len(items) == 0 {
		items = append(items, p.value(podReference(namespace, ""), 0))
	}
	return &custom_metrics.MetricValueList{Items: items}, nil
}

// check accepts gnmic_targets_present on namespaced pods and Clusters only.
func (p *CustomProvider) check(info provider.CustomMetricInfo) error {
	if info.Metric != TargetsPresentMetric || !info.Namespaced ||
		(info.GroupResource != podsResource && info.GroupResource != clustersResource) {
		return provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	}
	return nil
}

func (p *CustomProvider) value(object custom_metrics.ObjectReference, targets int64) custom_metrics.MetricValue {
	return custom_metrics.MetricValue{
		DescribedObject: object,
		Metric:          custom_metrics.MetricIdentifier{Name: TargetsPresentMetric},
		Timestamp:       metav1.NewTime(p.now()),
		Value:           *resource.NewQuantity(targets, resource.DecimalSI),
	}
}

func podReference(namespace, name string) custom_metrics.ObjectReference {
	return custom_metrics.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: name}
}

func clusterReference(namespace, name string) custom_metrics.ObjectReference {
	return custom_metrics.ObjectReference{
		APIVersion: operatorv1alpha1.GroupVersion.String(), Kind: "Cluster", Namespace: namespace, Name: name,
	}
}
