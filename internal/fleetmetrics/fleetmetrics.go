// Package fleetmetrics holds the operator's own Prometheus counters of placement events, registered with
// controller-runtime's metrics registry so that they appear on the operator's /metrics endpoint. The
// reconciler increments them; the per-Cluster gauges (targets, unassigned) are exported by metricsadapter
// from the cache at scrape time.
package fleetmetrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// MovesTotal counts targets moved from one collector pod to another, by namespace and cluster.
	MovesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gnmic_cluster_target_moves_total",
		Help: "Targets moved from one collector pod to another.",
	}, []string{"namespace", "cluster"})

	// PushFailuresTotal counts failed configuration pushes to collector pods, by namespace and cluster.
	PushFailuresTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gnmic_cluster_config_push_failures_total",
		Help: "Configuration pushes to collector pods that failed.",
	}, []string{"namespace", "cluster"})

	// RepairsTotal counts targets a collector dropped and the operator sent again, by namespace and cluster.
	RepairsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gnmic_cluster_target_repairs_total",
		Help: "Targets a collector was sent but did not run (it dropped the change), removed and sent again.",
	}, []string{"namespace", "cluster"})

	// HandoverOverlapsTotal counts moved targets sent to their new pod before the old collector confirmed
	// dropping them (the drop timeout expired), by namespace and cluster.
	HandoverOverlapsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gnmic_cluster_handover_overlaps_total",
		Help: "Moved targets sent to their new collector before the old one confirmed dropping them.",
	}, []string{"namespace", "cluster"})

	// StaleTargets is the number of targets collectors run without having been sent them (a dropped removal).
	StaleTargets = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gnmic_cluster_stale_targets",
		Help: "Targets collector pods run although they were not sent them (a removal the collector dropped).",
	}, []string{"namespace", "cluster"})

	// FailedOutputs is, per collector pod whose state is known, how many of the Outputs it holds it reports
	// failed to start (the collector accepted them; nothing reaches them from that pod).
	FailedOutputs = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gnmic_cluster_failed_outputs",
		Help: "Outputs a collector pod was sent and accepted but reports failed to start.",
	}, []string{"namespace", "cluster", "pod"})

	// FailedInputs is FailedOutputs for Inputs.
	FailedInputs = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gnmic_cluster_failed_inputs",
		Help: "Inputs a collector pod was sent and accepted but reports failed to start.",
	}, []string{"namespace", "cluster", "pod"})

	// PushDuration is how long one configuration push to a collector pod took, by result. It has no Cluster
	// label: a histogram per Cluster would cost a dozen series each, for a latency that depends on the
	// collectors, not on the Cluster.
	PushDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gnmic_collector_config_push_duration_seconds",
		Help:    "How long a configuration push to a collector pod took, by result: applied, rejected (the collector refused it), failed.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"result"})
)

// Results of a configuration push, the values of PushDuration's result label.
const (
	PushApplied  = "applied"
	PushRejected = "rejected"
	PushFailed   = "failed"
)

func init() {
	metrics.Registry.MustRegister(MovesTotal, PushFailuresTotal, RepairsTotal, HandoverOverlapsTotal, StaleTargets, PushDuration,
		FailedOutputs, FailedInputs)
}

// StartCounting creates a Cluster's counters at 0. A counter whose series appears only with its first
// increment hides that increment from Prometheus's increase() and rate(), which need two samples: an alert on
// the first handover overlap or repair of a Cluster would never fire.
func StartCounting(namespace, cluster string) {
	for _, v := range []*prometheus.CounterVec{MovesTotal, PushFailuresTotal, RepairsTotal, HandoverOverlapsTotal} {
		v.WithLabelValues(namespace, cluster)
	}
}

// ForgetCluster removes the series of a deleted Cluster, so that the operator's metrics do not grow with the
// Clusters it ever saw.
func ForgetCluster(namespace, cluster string) {
	for _, v := range []*prometheus.MetricVec{MovesTotal.MetricVec, PushFailuresTotal.MetricVec, RepairsTotal.MetricVec,
		HandoverOverlapsTotal.MetricVec, StaleTargets.MetricVec} {
		v.DeleteLabelValues(namespace, cluster)
	}
	ForgetPods(namespace, cluster)
}

// ForgetPods removes the per-pod series of a Cluster. It looks at every Cluster's series: a reconcile uses
// SetFailedComponents, which touches its own.
func ForgetPods(namespace, cluster string) {
	for _, v := range []*prometheus.GaugeVec{FailedOutputs, FailedInputs} {
		v.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "cluster": cluster})
	}
}

// SetFailedComponents sets FailedOutputs and FailedInputs of each of a Cluster's pods (outputs and inputs
// count the failed ones by pod; a pod missing from them has none), removes the series of the pods in before
// that are not in pods, and gives the pods whose series it set: the before of the next call.
func SetFailedComponents(namespace, cluster string, before, pods []string, outputs, inputs map[string]int) []string {
	for _, pod := range before {
		if !slices.Contains(pods, pod) {
			FailedOutputs.DeleteLabelValues(namespace, cluster, pod)
			FailedInputs.DeleteLabelValues(namespace, cluster, pod)
		}
	}
	for _, pod := range pods {
		FailedOutputs.WithLabelValues(namespace, cluster, pod).Set(float64(outputs[pod]))
		FailedInputs.WithLabelValues(namespace, cluster, pod).Set(float64(inputs[pod]))
	}
	return slices.Clone(pods)
}
