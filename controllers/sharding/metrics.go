package sharding

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	shardOwned = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gnmic_operator_shard_owned",
		Help: "What this operator replica reconciles when the operator is sharded: Clusters, their targets and their ready pods.",
	}, []string{"kind"})
	shardHandovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gnmic_operator_shard_handovers_total",
		Help: "Cluster handovers this replica took part in: took_over, drained, and marked_dead (an expired member's Lease).",
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(shardOwned, shardHandovers)
}

// shardLoad is what one replica owns.
type shardLoad struct{ clusters, targets, pods int }

func (l shardLoad) report() {
	shardOwned.WithLabelValues("clusters").Set(float64(l.clusters))
	shardOwned.WithLabelValues("targets").Set(float64(l.targets))
	shardOwned.WithLabelValues("pods").Set(float64(l.pods))
}
