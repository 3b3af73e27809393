package metricsadapter

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// externalMetrics maps each external metric to the Cluster status figure it reports.
var externalMetrics = map[string]func(*operatorv1alpha1.Cluster) int64{
	UnassignedTargetsMetric: func(c *operatorv1alpha1.Cluster) int64 { return int64(c.Status.UnassignedTargets) },
	TargetsDemandMetric:     func(c *operatorv1alpha1.Cluster) int64 { return int64(c.Status.TargetsCount) },
}

// ExternalProvider serves unassigned_targets and targets_demand per Cluster from the manager's cache.
type ExternalProvider struct {
	fleet fleetReader
	now   func() time.Time
}

var _ provider.ExternalMetricsProvider = (*ExternalProvider)(nil)

// ListAllExternalMetrics lists unassigned_targets and targets_demand.
func (p *ExternalProvider) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	return []provider.ExternalMetricInfo{{Metric: UnassignedTargetsMetric}, {Metric: TargetsDemandMetric}}
}

// GetExternalMetric answers one value per Cluster of the namespace whose label set {cluster=<name>} the
// metric selector matches. When none matches it answers one item of value 0, labelled with the Cluster the
// selector names by equality (cluster="" otherwise), because the autoscaler treats an empty list as an error.
func (p *ExternalProvider) GetExternalMetric(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	figure, ok := externalMetrics[info.Metric]
	if !ok {
		return nil, provider.NewMetricNotFoundError(schema.GroupResource{Group: external_metrics.GroupName}, info.Metric)
	}
	if metricSelector == nil {
		metricSelector = labels.Everything()
	}
	clusters, err := p.selectClusters(ctx, namespace, metricSelector)
	if err != nil {
		return nil, err
	}
	now := metav1.NewTime(p.now())
	items := make([]external_metrics.ExternalMetricValue, 0, max(len(clusters), 1))
	for i := range clusters {
		items = append(items, external_metrics.ExternalMetricValue{
			MetricName:   info.Metric,
			MetricLabels: map[string]string{ClusterMetricLabel: clusters[i].Name},
			Timestamp:    now,
			Value:        *resource.NewQuantity(figure(&clusters[i]), resource.DecimalSI),
		})
	}
	if len(items) == 0 {
		name, _ := metricSelector.RequiresExactMatch(ClusterMetricLabel)
		items = append(items, external_metrics.ExternalMetricValue{
			MetricName:   info.Metric,
			MetricLabels: map[string]string{ClusterMetricLabel: name},
			Timestamp:    now,
			Value:        *resource.NewQuantity(0, resource.DecimalSI),
		})
	}
	return &external_metrics.ExternalMetricValueList{Items: items}, nil
}

// selectClusters reads one Cluster when the selector names it by equality, else every Cluster of the namespace.
func (p *ExternalProvider) selectClusters(ctx context.Context, namespace string, selector labels.Selector) ([]operatorv1alpha1.Cluster, error) {
	if name, ok := selector.RequiresExactMatch(ClusterMetricLabel); ok {
		cluster, err := p.fleet.cluster(ctx, types.NamespacedName{Namespace: namespace, Name: name})
		if err != nil || cluster == nil || !selector.Matches(labels.Set{ClusterMetricLabel: name}) {
			return nil, err
		}
		return []operatorv1alpha1.Cluster{*cluster}, nil
	}
	all, err := p.fleet.allClusters(ctx, namespace)
	if err != nil {
		return nil, err
	}
	selected := all[:0:0]
	for i := range all {
		if selector.Matches(labels.Set{ClusterMetricLabel: all[i].Name}) {
			selected = append(selected, all[i])
		}
	}
	return selected, nil
}
