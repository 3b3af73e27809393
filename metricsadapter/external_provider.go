package metricsadapter

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// externalMetrics maps each external metric to the Cluster status figure it reports.
var externalMetrics = map[string]func(*operatorv1alpha1.Cluster) int64{
	UnassignedTargetsMetric: func(c *operatorv1alpha1.Cluster) int64 { return int64(c.Status.UnassignedTargets) },
	// Demand counts the targets that can be placed: a skipped target (its configuration cannot be rendered)
	// takes no room on any pod. The dial-in devices the collectors run take room too, so they count.
	TargetsDemandMetric: func(c *operatorv1alpha1.Cluster) int64 {
		return int64(c.Status.TargetsCount - c.Status.SkippedTargets + c.Status.TunnelTargets)
	},
	// The same two figures in podCapacity's units, for Clusters that weigh their targets.
	TargetUnitsDemandMetric:     func(c *operatorv1alpha1.Cluster) int64 { return int64(c.Status.TargetUnits) },
	UnassignedTargetUnitsMetric: func(c *operatorv1alpha1.Cluster) int64 { return int64(c.Status.UnassignedUnits) },
}

// ExternalProvider serves unassigned_targets and targets_demand per Cluster from the manager's cache, and the
// same in weight units: unassigned_target_units and target_units_demand.
type ExternalProvider struct {
	fleet fleetReader
	now   func() time.Time
}

var _ provider.ExternalMetricsProvider = (*ExternalProvider)(nil)

// ListAllExternalMetrics lists unassigned_targets, targets_demand, unassigned_target_units and
// target_units_demand.
func (p *ExternalProvider) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	return []provider.ExternalMetricInfo{{Metric: UnassignedTargetsMetric}, {Metric: TargetsDemandMetric},
		{Metric: UnassignedTargetUnitsMetric}, {Metric: TargetUnitsDemandMetric}}
}

// GetExternalMetric answers one value per Cluster of the namespace whose labels, its own plus
// cluster=<name>, the metric selector matches; each value is labelled with that label set. A selector that
// names a Cluster that does not exist, or matches no Cluster, is a NotFound error naming what is missing.
func (p *ExternalProvider) GetExternalMetric(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	figure, ok := externalMetrics[info.Metric]
	if !ok {
		return nil, provider.NewMetricNotFoundError(schema.GroupResource{Group: external_metrics.GroupName}, info.Metric)
	}
	if metricSelector == nil {
		metricSelector = labels.Everything()
	}
	clusters, err := p.fleet.matchingClusters(ctx, namespace, metricSelector)
	if err != nil {
		return nil, err
	}
	now := metav1.NewTime(p.now())
	items := make([]external_metrics.ExternalMetricValue, 0, len(clusters))
	for i := range clusters {
		items = append(items, external_metrics.ExternalMetricValue{
			MetricName:   info.Metric,
			MetricLabels: labelsOf(&clusters[i]).set(),
			Timestamp:    now,
			Value:        *resource.NewQuantity(figure(&clusters[i]), resource.DecimalSI),
		})
	}
	return &external_metrics.ExternalMetricValueList{Items: items}, nil
}
