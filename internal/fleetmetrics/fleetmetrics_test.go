package fleetmetrics

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// seriesOf counts the series of the named families on the operator's registry that belong to one Cluster.
func seriesOf(t *testing.T, namespace, cluster string, names ...string) map[string]int {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == namespace && labels["cluster"] == cluster {
				counts[f.GetName()]++
				if v := m.GetCounter().GetValue(); v != 0 {
					t.Errorf("%s of %s/%s is %v, want 0", f.GetName(), namespace, cluster, v)
				}
			}
		}
	}
	return counts
}

func TestStartCountingExportsEveryCounterOfAClusterAtZeroUntilItIsForgotten(t *testing.T) {
	counters := []string{"gnmic_cluster_target_moves_total", "gnmic_cluster_config_push_failures_total",
		"gnmic_cluster_target_repairs_total", "gnmic_cluster_handover_overlaps_total"}
	if got := seriesOf(t, "telemetry", "edge", counters...); len(got) != 0 {
		t.Fatalf("series before StartCounting: %v", got)
	}
	StartCounting("telemetry", "edge")
	got := seriesOf(t, "telemetry", "edge", counters...)
	for _, name := range counters {
		if got[name] != 1 {
			t.Errorf("%s: %d series of telemetry/edge after StartCounting, want 1", name, got[name])
		}
	}
	ForgetCluster("telemetry", "edge")
	if got := seriesOf(t, "telemetry", "edge", counters...); len(got) != 0 {
		t.Fatalf("series after ForgetCluster: %v", got)
	}
}
