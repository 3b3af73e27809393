package metricsadapter

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// labelledFleet has Clusters with and without labels of their own; canary carries a label cluster=edge,
// which the name of the Cluster edge overrides.
func labelledFleet(t *testing.T) (*CustomProvider, *ExternalProvider) {
	return testProviders(fakeReader(t,
		labelled(cluster("edge", 4, 7, 5), map[string]string{"tier": "gold", "site": "par"}),
		labelled(cluster("core", 0, 3), map[string]string{"tier": "silver"}),
		cluster("lab", 2),
		labelled(cluster("canary", 1, 1), map[string]string{"tier": "gold", ClusterMetricLabel: "edge"}),
	))
}

func externalValues(t *testing.T, p *ExternalProvider, metric, selector string) map[string]int64 {
	t.Helper()
	list, err := p.GetExternalMetric(context.Background(), testNamespace, parseSelector(t, selector),
		provider.ExternalMetricInfo{Metric: metric})
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

func parseSelector(t *testing.T, selector string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func TestExternalMetricsPerCluster(t *testing.T) {
	_, external := labelledFleet(t)

	cases := []struct {
		name, metric, selector string
		want                   map[string]int64
	}{
		{"every Cluster of the namespace without a selector", UnassignedTargetsMetric, "",
			map[string]int64{"edge": 4, "core": 0, "lab": 2, "canary": 1}},
		{"one Cluster by name, not another Cluster carrying a label cluster of that value", UnassignedTargetsMetric,
			"cluster=edge", map[string]int64{"edge": 4}},
		{"a Cluster with nothing unassigned answers 0", UnassignedTargetsMetric, "cluster=core", map[string]int64{"core": 0}},
		{"Clusters by a set of names", UnassignedTargetsMetric, "cluster in (edge,lab)", map[string]int64{"edge": 4, "lab": 2}},
		{"Clusters by their own label", UnassignedTargetsMetric, "tier=gold", map[string]int64{"edge": 4, "canary": 1}},
		{"Clusters by a set of own label values", UnassignedTargetsMetric, "tier in (gold,silver)",
			map[string]int64{"edge": 4, "canary": 1, "core": 0}},
		{"Clusters without an own label", UnassignedTargetsMetric, "!tier", map[string]int64{"lab": 2}},
		{"a name and an own label together", TargetsDemandMetric, "cluster=edge,site=par", map[string]int64{"edge": 16}},
		{"named Clusters that one requirement excludes", TargetsDemandMetric, "cluster in (edge,core),tier=gold",
			map[string]int64{"edge": 16}},
		{"demand is assigned plus unassigned", TargetsDemandMetric, "cluster=edge", map[string]int64{"edge": 16}},
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

func TestExternalMetricsRefuseSelectorsThatFindNoCluster(t *testing.T) {
	_, external := labelledFleet(t)

	cases := []struct {
		name, selector, namespace, message string
	}{
		{"a name that no Cluster has", "cluster=edgee", testNamespace, `Cluster "edgee" not found in namespace "telemetry"`},
		{"a set naming an absent Cluster beside a present one", "cluster in (edge,edgee)", testNamespace,
			`Cluster "edgee" not found in namespace "telemetry"`},
		{"a set naming several absent Clusters", "cluster in (gone,lost)", testNamespace,
			`Clusters "gone", "lost" not found in namespace "telemetry"`},
		{"an own label no Cluster has", "tier=glod", testNamespace, `no Cluster in namespace "telemetry" matches "tier=glod"`},
		{"a name with an own label the Cluster lacks", "cluster=edge,tier=silver", testNamespace,
			`no Cluster in namespace "telemetry" matches "cluster=edge,tier=silver"`},
		{"two different names at once", "cluster=edge,cluster=core", testNamespace, `no Cluster in namespace "telemetry" matches`},
		{"an exclusion of every Cluster", "cluster notin (edge,core,lab,canary)", testNamespace,
			`no Cluster in namespace "telemetry" matches`},
		{"a namespace without Clusters", "", "empty", `no Cluster in namespace "empty"`},
		{"a Cluster of another namespace", "cluster=edge", "elsewhere", `Cluster "edge" not found in namespace "elsewhere"`},
	}
	for _, tc := range cases {
		for _, metric := range []string{UnassignedTargetsMetric, TargetsDemandMetric} {
			t.Run(tc.name+" "+metric, func(t *testing.T) {
				list, err := external.GetExternalMetric(context.Background(), tc.namespace, parseSelector(t, tc.selector),
					provider.ExternalMetricInfo{Metric: metric})
				if err == nil {
					t.Fatalf("answered %v, want a not-found error", list.Items)
				}
				if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), tc.message) {
					t.Errorf("error %q (not found: %t), want a not-found error containing %q", err, apierrors.IsNotFound(err), tc.message)
				}
			})
		}
	}
}

func TestExternalMetricsLabelEachValueWithTheClusterLabelsTheSelectorMatched(t *testing.T) {
	_, external := labelledFleet(t)
	list, err := external.GetExternalMetric(context.Background(), testNamespace, parseSelector(t, "tier=gold"),
		provider.ExternalMetricInfo{Metric: UnassignedTargetsMetric})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]labels.Set{
		"edge":   {ClusterMetricLabel: "edge", "tier": "gold", "site": "par"},
		"canary": {ClusterMetricLabel: "canary", "tier": "gold"},
	}
	if len(list.Items) != len(want) {
		t.Fatalf("%d items, want %d", len(list.Items), len(want))
	}
	for _, item := range list.Items {
		got := labels.Set(item.MetricLabels)
		if w := want[got[ClusterMetricLabel]]; !labels.Equals(got, w) {
			t.Errorf("metricLabels %v, want %v", got, w)
		}
	}
}

func TestExternalMetricsRefuseUnknownNames(t *testing.T) {
	_, external := testProviders(fakeReader(t))
	if _, err := external.GetExternalMetric(context.Background(), testNamespace, labels.Everything(),
		provider.ExternalMetricInfo{Metric: "queue_length"}); err == nil {
		t.Error("want a not-found error for an unknown metric")
	}
}

func TestExternalMetricsDiscoveryListsEveryMetricServed(t *testing.T) {
	_, external := testProviders(fakeReader(t))
	got := map[string]bool{}
	for _, info := range external.ListAllExternalMetrics() {
		got[info.Metric] = true
	}
	want := []string{UnassignedTargetsMetric, TargetsDemandMetric, UnassignedTargetUnitsMetric, TargetUnitsDemandMetric}
	for _, metric := range want {
		if !got[metric] {
			t.Errorf("discovery lists %v, want %s", got, metric)
		}
	}
	if len(got) != len(externalMetrics) {
		t.Errorf("discovery lists %v, want the %d metrics the provider serves", got, len(externalMetrics))
	}
}

func TestUnitMetricsServeTheWeightOfTheDemandAndOfTheOverflow(t *testing.T) {
	c := cluster("edge", 2, 10, 5)
	c.Status.TargetUnits, c.Status.UnassignedUnits = 64, 9
	_, external := testProviders(fakeReader(t, c))
	if got := externalValues(t, external, TargetUnitsDemandMetric, "cluster=edge"); got["edge"] != 64 {
		t.Errorf("target_units_demand %v, want status.targetUnits 64", got)
	}
	if got := externalValues(t, external, UnassignedTargetUnitsMetric, "cluster=edge"); got["edge"] != 9 {
		t.Errorf("unassigned_target_units %v, want status.unassignedUnits 9", got)
	}
	if got := externalValues(t, external, TargetsDemandMetric, "cluster=edge"); got["edge"] != 17 {
		t.Errorf("targets_demand %v, want 17: counting targets whatever they weigh", got)
	}
}

func TestTargetsDemandLeavesOutTargetsThatCannotBeConfigured(t *testing.T) {
	c := cluster("edge", 2, 10, 5)
	c.Status.TargetsCount += 3
	c.Status.SkippedTargets = 3
	_, external := testProviders(fakeReader(t, c))
	if got := externalValues(t, external, TargetsDemandMetric, "cluster=edge"); got["edge"] != 17 {
		t.Fatalf("demand %v, want 17: 15 assigned and 2 unassigned, not the 3 skipped", got)
	}
}
