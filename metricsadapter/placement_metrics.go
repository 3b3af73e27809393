package metricsadapter

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// placementCollector exports each Cluster's placement figures, read from the cache at scrape time, for
// dashboards and alerts: the same numbers the metrics APIs serve and the status shows, in the operator's own
// Prometheus endpoint. Every replica exports them for every Cluster (every replica caches every Cluster).
type placementCollector struct {
	reader atomic.Pointer[client.Reader]

	targets         *prometheus.Desc
	unassigned      *prometheus.Desc
	skipped         *prometheus.Desc
	present         *prometheus.Desc
	capacity        *prometheus.Desc
	replicas        *prometheus.Desc
	pods            *prometheus.Desc
	condition       *prometheus.Desc
	podAcknowledged *prometheus.Desc
	tunnel          *prometheus.Desc
	podTunnel       *prometheus.Desc
	targetUnits     *prometheus.Desc
	unassignedUnits *prometheus.Desc
	podUnits        *prometheus.Desc
}

// podStates are the states of status.podStatuses; each gets a series, 0 when no pod is in it, so that an
// alert on one state sees it go back to 0.
var podStates = []string{operatorv1alpha1.PodReady, operatorv1alpha1.PodHolding, operatorv1alpha1.PodUnavailable,
	operatorv1alpha1.PodConfigFailed}

var placement = newPlacementCollector()

func newPlacementCollector() *placementCollector {
	return &placementCollector{
		targets: prometheus.NewDesc("gnmic_cluster_targets",
			"Targets the Cluster's pipelines select (status.targetsCount).", []string{"namespace", "cluster"}, nil),
		unassigned: prometheus.NewDesc("gnmic_cluster_unassigned_targets",
			"Targets no collector pod of the Cluster could take (status.unassignedTargets).", []string{"namespace", "cluster"}, nil),
		skipped: prometheus.NewDesc("gnmic_cluster_skipped_targets",
			"Selected targets whose configuration cannot be rendered, sent to no collector (status.skippedTargets).",
			[]string{"namespace", "cluster"}, nil),
		present: prometheus.NewDesc("gnmic_cluster_targets_present",
			"Targets the Cluster's collector pods hold: those they acknowledged and the dial-in devices they run.", []string{"namespace", "cluster"}, nil),
		capacity: prometheus.NewDesc("gnmic_cluster_pod_capacity",
			"Per-pod capacity placement used last (status.podCapacity).", []string{"namespace", "cluster"}, nil),
		replicas: prometheus.NewDesc("gnmic_cluster_replicas",
			"Collector pods the Cluster asks for (spec.replicas, which an autoscaler writes).", []string{"namespace", "cluster"}, nil),
		pods: prometheus.NewDesc("gnmic_cluster_pods",
			"Collector pods by state (status.podStatuses): Ready, Holding, Unavailable, ConfigFailed.",
			[]string{"namespace", "cluster", "state"}, nil),
		condition: prometheus.NewDesc("gnmic_cluster_condition",
			"1 when the Cluster's condition of this type is True, 0 otherwise; reason is the condition's reason.",
			[]string{"namespace", "cluster", "type", "reason"}, nil),
		podAcknowledged: prometheus.NewDesc("gnmic_collector_targets",
			"Targets in the configuration the collector pod acknowledged (status.collectors[].targets).",
			[]string{"namespace", "cluster", "pod"}, nil),
		tunnel: prometheus.NewDesc("gnmic_cluster_tunnel_targets",
			"Dial-in devices the Cluster's collector pods run through their tunnel servers (status.tunnelTargets).",
			[]string{"namespace", "cluster"}, nil),
		podTunnel: prometheus.NewDesc("gnmic_collector_tunnel_targets",
			"Dial-in devices the collector pod runs through its tunnel server (status.collectors[].tunnelTargetsCount).",
			[]string{"namespace", "cluster", "pod"}, nil),
		targetUnits: prometheus.NewDesc("gnmic_cluster_target_units",
			"Weight of the targets placement places plus the dial-in devices, in podCapacity's units "+
				"(status.targetUnits): the demand, equal to targets_demand when the Cluster places by count.",
			[]string{"namespace", "cluster"}, nil),
		unassignedUnits: prometheus.NewDesc("gnmic_cluster_unassigned_target_units",
			"Weight of the targets no collector pod of the Cluster could take (status.unassignedUnits).",
			[]string{"namespace", "cluster"}, nil),
		podUnits: prometheus.NewDesc("gnmic_collector_target_units",
			"Weight of the targets placed on the collector pod, its load in podCapacity's units (status.collectors[].targetUnits).",
			[]string{"namespace", "cluster", "pod"}, nil),
	}
}

// scrapeTimeout bounds a scrape's read of the cache, which blocks until the informer has synced.
const scrapeTimeout = 5 * time.Second

// use makes the collector read Clusters from reader; until then it exports nothing.
func (p *placementCollector) use(reader client.Reader) { p.reader.Store(&reader) }

// Describe sends the descriptors of the placement gauges.
func (p *placementCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.targets, p.unassigned, p.skipped, p.present, p.capacity, p.replicas, p.pods,
		p.condition, p.podAcknowledged, p.tunnel, p.podTunnel, p.targetUnits, p.unassignedUnits, p.podUnits} {
		ch <- d
	}
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
		p.collectCluster(ch, &list.Items[i])
	}
}

func (p *placementCollector) collectCluster(ch chan<- prometheus.Metric, c *operatorv1alpha1.Cluster) {
	gauge := func(desc *prometheus.Desc, value float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, value, append([]string{c.Namespace, c.Name}, labels...)...)
	}
	gauge(p.targets, float64(c.Status.TargetsCount))
	gauge(p.unassigned, float64(c.Status.UnassignedTargets))
	gauge(p.skipped, float64(c.Status.SkippedTargets))
	gauge(p.present, float64(clusterTargetsPresent(c)))
	gauge(p.capacity, float64(c.Status.PodCapacity))
	gauge(p.tunnel, float64(c.Status.TunnelTargets))
	gauge(p.targetUnits, float64(c.Status.TargetUnits))
	gauge(p.unassignedUnits, float64(c.Status.UnassignedUnits))
	if c.Spec.Replicas != nil {
		gauge(p.replicas, float64(*c.Spec.Replicas))
	}
	for _, state := range podStates {
		gauge(p.pods, float64(len(c.Status.PodStatuses[state])), state)
	}
	for _, cond := range c.Status.Conditions {
		gauge(p.condition, boolValue(cond.Status == metav1.ConditionTrue), cond.Type, cond.Reason)
	}
	for _, collector := range c.Status.Collectors {
		gauge(p.podAcknowledged, float64(collector.Targets), collector.Pod)
		gauge(p.podTunnel, float64(collector.TunnelTargetsCount), collector.Pod)
		gauge(p.podUnits, float64(collector.TargetUnits), collector.Pod)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
