package fleetmetrics

import (
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

func TestSetFailedComponentsKeepsTheSeriesOfTheClustersPodsAsTheyAre(t *testing.T) {
	pods := func(v interface {
		Collect(chan<- prometheus.Metric)
	}, namespace, cluster string) map[string]float64 {
		out := map[string]float64{}
		ch := make(chan prometheus.Metric, 64)
		go func() { v.Collect(ch); close(ch) }()
		for m := range ch {
			var d dto.Metric
			if err := m.Write(&d); err != nil {
				t.Fatal(err)
			}
			labels := map[string]string{}
			for _, l := range d.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == namespace && labels["cluster"] == cluster {
				out[labels["pod"]] = d.GetGauge().GetValue()
			}
		}
		return out
	}
	defer ForgetCluster("ns", "a")
	defer ForgetCluster("ns", "b")
	other := SetFailedComponents("ns", "b", nil, []string{"b-0"}, map[string]int{"b-0": 2}, nil)

	set := SetFailedComponents("ns", "a", nil, []string{"a-0", "a-1", "a-2"}, map[string]int{"a-1": 1}, map[string]int{"a-2": 3})
	if got, want := pods(FailedOutputs, "ns", "a"), map[string]float64{"a-0": 0, "a-1": 1, "a-2": 0}; !maps.Equal(got, want) {
		t.Errorf("failed outputs %v, want %v", got, want)
	}
	if got, want := pods(FailedInputs, "ns", "a"), map[string]float64{"a-0": 0, "a-1": 0, "a-2": 3}; !maps.Equal(got, want) {
		t.Errorf("failed inputs %v, want %v", got, want)
	}
	// a-1 is gone, a-3 came; a-0's output failed since.
	set = SetFailedComponents("ns", "a", set, []string{"a-0", "a-2", "a-3"}, map[string]int{"a-0": 1}, nil)
	if !slices.Equal(set, []string{"a-0", "a-2", "a-3"}) {
		t.Errorf("pods set %v", set)
	}
	if got, want := pods(FailedOutputs, "ns", "a"), map[string]float64{"a-0": 1, "a-2": 0, "a-3": 0}; !maps.Equal(got, want) {
		t.Errorf("failed outputs %v, want %v", got, want)
	}
	if got, want := pods(FailedInputs, "ns", "a"), map[string]float64{"a-0": 0, "a-2": 0, "a-3": 0}; !maps.Equal(got, want) {
		t.Errorf("failed inputs %v, want %v", got, want)
	}
	SetFailedComponents("ns", "a", set, nil, nil, nil)
	if got := pods(FailedOutputs, "ns", "a"); len(got) != 0 {
		t.Errorf("failed outputs %v after every pod went", got)
	}
	if got, want := pods(FailedOutputs, "ns", "b"), map[string]float64{"b-0": 2}; !maps.Equal(got, want) || !slices.Equal(other, []string{"b-0"}) {
		t.Errorf("another Cluster's failed outputs %v, want %v", got, want)
	}
}
