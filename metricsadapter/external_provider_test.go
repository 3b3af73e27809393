package metricsadapter

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

func externalValues(t *testing.T, p *ExternalProvider, metric, selector string) map[string]int64 {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	list, err := p.GetExternalMetric(context.Background(), testNamespace, sel, provider.ExternalMetricInfo{Metric: metric})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, item := range list.Items {
		if item.MetricName != metric {
			t.Errorf("item named %s, want %s", item.MetricName, metric)
		}
		got[item.MetricLabels[ClusterMetricLabel]] = item.Value.Value()
	}
	if len(got) != len(list.Items) {
		t.Errorf("%d items for %d clusters: want one per Cluster", len(list.Items), len(got))
	}
	return got
}

func TestExternalMetricsPerCluster(t *testing.T) {
	_, external := testProviders(fakeReader(t, cluster("edge", 4, 7, 5), cluster("core", 0, 3), cluster("lab", 2)))

	cases := []struct {
		name, metric, selector string
		want                   map[string]int64
	}{
		{"every Cluster of the namespace without a selector", UnassignedTargetsMetric, "",
			map[string]int64{"edge": 4, "core": 0, "lab": 2}},
		{"one Cluster by equality", UnassignedTargetsMetric, "cluster=edge", map[string]int64{"edge": 4}},
		{"Clusters by set", UnassignedTargetsMetric, "cluster in (edge,lab)", map[string]int64{"edge": 4, "lab": 2}},
		{"demand is assigned plus unassigned", TargetsDemandMetric, "cluster=edge", map[string]int64{"edge": 16}},
		{"an absent Cluster named by equality gives 0 under its name", UnassignedTargetsMetric, "cluster=gone",
			map[string]int64{"gone": 0}},
		{"an equality contradicted by another requirement gives 0", UnassignedTargetsMetric, "cluster=edge,cluster!=edge",
			map[string]int64{"edge": 0}},
		{"a selector matching nothing gives 0 with an empty cluster", TargetsDemandMetric, "cluster notin (edge,core,lab)",
			map[string]int64{"": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := externalValues(t, external, tc.metric, tc.selector)
			if len(got) != len(tc.want) {
				t.Fatalf("values %v, want %v", got, tc.want)
			}
			for cluster, n := range tc.want {
				if v, ok := got[cluster]; !ok || v != n {
					t.Errorf("cluster %q: %d (present %t), want %d", cluster, v, ok, n)
				}
			}
		})
	}
}

func TestExternalMetricsRefuseUnknownNames(t *testing.T) {
	_, external := testProviders(fakeReader(t))
	if _, err := external.GetExternalMetric(context.Background(), testNamespace, labels.Everything(),
		provider.ExternalMetricInfo{Metric: "queue_length"}); err == nil {
		t.Error("want a not-found error for an unknown metric")
	}
}

func TestExternalMetricsDiscoveryListsBothMetrics(t *testing.T) {
	_, external := testProviders(fakeReader(t))
	got := map[string]bool{}
	for _, info := range external.ListAllExternalMetrics() {
		got[info.Metric] = true
	}
	if !got[UnassignedTargetsMetric] || !got[TargetsDemandMetric] || len(got) != 2 {
		t.Errorf("discovery lists %v, want %s and %s", got, UnassignedTargetsMetric, TargetsDemandMetric)
	}
}
