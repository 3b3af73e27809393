package metricsadapter

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// placementCollector exports each Cluster's placement figures, read from the cache at scrape time, for
// dashboards: the same numbers the metrics APIs serve, in the operator's own Prometheus endpoint.
type placementCollector struct {
	reader atomic.Pointer[client.Reader]

	targets    *prometheus.Desc
	unassigned *prometheus.Desc
	present    *prometheus.Desc
	capacity   *prometheus.Desc
}

var placement = &placementCollector{
	targets: prometheus.NewDesc("gnmic_cluster_targets",
		"Targets the Cluster's pipelines select (status.targetsCount).", []string{"namespace", "cluster"}, nil),
	unassigned: prometheus.NewDesc("gnmic_cluster_unassigned_targets",
		"Targets no collector pod of the Cluster could take (status.unassignedTargets).", []string{"namespace", "cluster"}, nil),
	present: prometheus.NewDesc("gnmic_cluster_targets_present",
		"Targets the Cluster's collector pods acknowledged.", []string{"namespace", "cluster"}, nil),
	capacity: prometheus.NewDesc("gnmic_cluster_pod_capacity",
		"Per-pod capacity placement used last (status.podCapacity).", []string{"namespace", "cluster"}, nil),
}

// scrapeTimeout bounds a scrape's read of the cache, which blocks until the informer has synced.
const scrapeTimeout = 5 * time.Second

// use makes the collector read Clusters from reader; until then it exports nothing.
func (p *placementCollector) use(reader client.Reader) { p.reader.Store(&reader) }

// Describe sends the descriptors of the placement gauges.
func (p *placementCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.targets
	ch <- p.unassigned
	ch <- p.present
	ch <- p.capacity
}

// Collect sends one gauge of each figure per Cluster.
func (p *placementCollector) Collect(ch chan<- prometheus.Metric) {
	reader := p.reader.Load()
	if reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	var list operatorv1alpha1.ClusterList
	if err := (*reader).List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(p.targets, err)
		return
	}
	for i := range list.Items {
		c := &list.Items[i]
		labels := []string{c.Namespace, c.Name}
		ch <- prometheus.MustNewConstMetric(p.targets, prometheus.GaugeValue, float64(c.Status.TargetsCount), labels...)
		ch <- prometheus.MustNewConstMetric(p.unassigned, prometheus.GaugeValue, float64(c.Status.UnassignedTargets), labels...)
		ch <- prometheus.MustNewConstMetric(p.present, prometheus.GaugeValue, float64(clusterTargetsPresent(c)), labels...)
		ch <- prometheus.MustNewConstMetric(p.capacity, prometheus.GaugeValue, float64(c.Status.PodCapacity), labels...)
	}
}
