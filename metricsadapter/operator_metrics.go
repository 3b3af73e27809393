package metricsadapter

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// apiServiceConflict is 1 for every metrics APIService that another component owns (it points at another
// Service), so the operator left it alone and does not serve that group/version; 0 once the operator owns it.
var apiServiceConflict = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "gnmic_operator_metrics_api_conflict",
	Help: "1 when the named metrics APIService belongs to another component and the operator leaves it alone.",
}, []string{"apiservice"})

func init() {
	metrics.Registry.MustRegister(apiServiceConflict, placement)
}
