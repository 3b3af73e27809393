// Package fleetmetrics holds the operator's own Prometheus counters of placement events, registered with
// controller-runtime's metrics registry so that they appear on the operator's /metrics endpoint. The
// reconciler increments them; the per-Cluster gauges (targets, unassigned) are exported by metricsadapter
// from the cache at scrape time.
package fleetmetrics

import (
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
)

func init() {
	metrics.Registry.MustRegister(MovesTotal, PushFailuresTotal)
}
