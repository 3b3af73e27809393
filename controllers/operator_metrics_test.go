package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// gathered is the operator's registry as a scrape sees it: family name → its series.
func gathered() map[string][]*dto.Metric {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	out := map[string][]*dto.Metric{}
	for _, f := range families {
		out[f.GetName()] = f.GetMetric()
	}
	return out
}

// seriesOf returns the series of family whose labels include every pair of want.
func seriesOf(g map[string][]*dto.Metric, family string, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range g[family] {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if match {
			out = append(out, m)
		}
	}
	return out
}

func pushesApplied() uint64 {
	var n uint64
	for _, m := range seriesOf(gathered(), "gnmic_collector_config_push_duration_seconds", map[string]string{"result": "applied"}) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

var _ = Describe("Operator metrics", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	It("exports a Cluster's counters at 0 from its first reconcile, and times every push", func() {
		before := pushesApplied()
		f := newFleet(2, nil, "")
		f.addTargets(0, 4)
		f.converged(4, 0)
		cluster := map[string]string{"namespace": f.ns, "cluster": f.name}
		Eventually(func(g Gomega) {
			scrape := gathered()
			// Without series at 0, the first overlap or repair would be invisible to increase() and its alert.
			for _, counter := range []string{"gnmic_cluster_handover_overlaps_total", "gnmic_cluster_target_repairs_total",
				"gnmic_cluster_config_push_failures_total", "gnmic_cluster_target_moves_total"} {
				series := seriesOf(scrape, counter, cluster)
				g.Expect(series).To(HaveLen(1), counter)
			}
			g.Expect(seriesOf(scrape, "gnmic_cluster_handover_overlaps_total", cluster)[0].GetCounter().GetValue()).To(BeZero())
			g.Expect(seriesOf(scrape, "gnmic_cluster_target_repairs_total", cluster)[0].GetCounter().GetValue()).To(BeZero())
		}, 10*time.Second).Should(Succeed())
		Expect(pushesApplied()).To(BeNumerically(">=", before+2), "each of the 2 pods was pushed its configuration once at least")
	})
})
