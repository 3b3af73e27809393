package metricsadapter

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func podsInfo() provider.CustomMetricInfo {
	return provider.CustomMetricInfo{GroupResource: podsResource, Namespaced: true, Metric: TargetsPresentMetric}
}

func clustersInfo() provider.CustomMetricInfo {
	return provider.CustomMetricInfo{GroupResource: clustersResource, Namespaced: true, Metric: TargetsPresentMetric}
}

func TestTargetsPresentGivesEveryMatchedPodItsAcknowledgedTargets(t *testing.T) {
	reader := fakeReader(t, cluster("edge", 0, 7, 5),
		collectorPod("edge", 0), collectorPod("edge", 1), collectorPod("edge", 2), collectorPod("core", 0))
	custom, _ := testProviders(reader)
	selector := labels.SelectorFromSet(labels.Set{operatorv1alpha1.ClusterLabel: "edge"})

	list, err := custom.GetMetricBySelector(context.Background(), testNamespace, selector, podsInfo(), labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, item := range list.Items {
		got[item.DescribedObject.Name] = item.Value.Value()
		if item.DescribedObject.Kind != "Pod" || item.Metric.Name != TargetsPresentMetric {
			t.Errorf("item %+v: want a Pod and metric %s", item.DescribedObject, TargetsPresentMetric)
		}
	}
	want := map[string]int64{"edge-0": 7, "edge-1": 5, "edge-2": 0}
	if len(got) != len(want) {
		t.Fatalf("values %v, want %v", got, want)
	}
	for pod, n := range want {
		if got[pod] != n {
			t.Errorf("pod %s: %d targets, want %d", pod, got[pod], n)
		}
	}
}

func TestTargetsPresentIgnoresAnEntryOfAnEarlierPodOfTheSameName(t *testing.T) {
	recreated := collectorPod("edge", 0)
	recreated.UID = "uid-recreated"
	custom, _ := testProviders(fakeReader(t, cluster("edge", 0, 7), recreated))

	value, err := custom.GetMetricByName(context.Background(), types.NamespacedName{Namespace: testNamespace, Name: "edge-0"},
		podsInfo(), labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if value.Value.Value() != 0 {
		t.Errorf("recreated pod: %d targets, want 0 until it acknowledges a configuration", value.Value.Value())
	}
}

func TestTargetsPresentOfOnePodByName(t *testing.T) {
	custom, _ := testProviders(fakeReader(t, cluster("edge", 0, 7, 5), collectorPod("edge", 0), collectorPod("edge", 1)))

	for pod, want := range map[string]int64{"edge-1": 5, "edge-9": 0} {
		value, err := custom.GetMetricByName(context.Background(), types.NamespacedName{Namespace: testNamespace, Name: pod},
			podsInfo(), labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		if value.DescribedObject.Name != pod || value.Value.Value() != want {
			t.Errorf("pod %s: %s = %d, want %d", pod, value.DescribedObject.Name, value.Value.Value(), want)
		}
	}
}

func TestTargetsPresentOfAClusterIsTheSumOverItsPods(t *testing.T) {
	custom, _ := testProviders(fakeReader(t, cluster("edge", 4, 7, 5)))

	value, err := custom.GetMetricByName(context.Background(), types.NamespacedName{Namespace: testNamespace, Name: "edge"},
		clustersInfo(), labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if value.Value.Value() != 12 || value.DescribedObject.Kind != "Cluster" {
		t.Errorf("cluster total: %s %d, want Cluster 12", value.DescribedObject.Kind, value.Value.Value())
	}
}

func TestTargetsPresentAnswersOneZeroItemWhenNoPodMatches(t *testing.T) {
	custom, _ := testProviders(fakeReader(t, cluster("edge", 0, 7)))
	selector := labels.SelectorFromSet(labels.Set{operatorv1alpha1.ClusterLabel: "absent"})

	list, err := custom.GetMetricBySelector(context.Background(), testNamespace, selector, podsInfo(), labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Value.Value() != 0 {
		t.Errorf("%d items, want one item of value 0", len(list.Items))
	}
}

func TestTargetsPresentOfClustersBySelectorMatchesTheirLabelsAndName(t *testing.T) {
	custom, _ := labelledFleet(t)

	cases := []struct {
		name, selector string
		want           map[string]int64
	}{
		{"every Cluster without a selector", "", map[string]int64{"edge": 12, "core": 3, "lab": 0, "canary": 1}},
		{"one Cluster by name, not another Cluster carrying a label cluster of that value", "cluster=edge",
			map[string]int64{"edge": 12}},
		{"Clusters by a set of names", "cluster in (core,lab)", map[string]int64{"core": 3, "lab": 0}},
		{"Clusters by their own label", "tier=gold", map[string]int64{"edge": 12, "canary": 1}},
		{"a name and an own label together", "cluster=edge,site=par", map[string]int64{"edge": 12}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			list, err := custom.GetMetricBySelector(context.Background(), testNamespace, parseSelector(t, tc.selector),
				clustersInfo(), labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, item := range list.Items {
				got[item.DescribedObject.Name] = item.Value.Value()
			}
			if len(got) != len(tc.want) || len(list.Items) != len(tc.want) {
				t.Fatalf("values %v, want %v", got, tc.want)
			}
			for name, n := range tc.want {
				if v, ok := got[name]; !ok || v != n {
					t.Errorf("cluster %q: %d (present %t), want %d", name, v, ok, n)
				}
			}
		})
	}
}

func TestTargetsPresentOfClustersRefusesSelectorsThatFindNoCluster(t *testing.T) {
	custom, _ := labelledFleet(t)

	for selector, message := range map[string]string{
		"cluster=edgee":            `Cluster "edgee" not found in namespace "telemetry"`,
		"tier=glod":                `no Cluster in namespace "telemetry" matches "tier=glod"`,
		"cluster=edge,tier=silver": `no Cluster in namespace "telemetry" matches "cluster=edge,tier=silver"`,
	} {
		list, err := custom.GetMetricBySelector(context.Background(), testNamespace, parseSelector(t, selector),
			clustersInfo(), labels.Everything())
		if err == nil {
			t.Errorf("%s: answered %v, want a not-found error", selector, list.Items)
			continue
		}
		if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), message) {
			t.Errorf("%s: error %q, want a not-found error containing %q", selector, err, message)
		}
	}
}

func TestTargetsPresentOfAnAbsentClusterByNameIsNotFound(t *testing.T) {
	custom, _ := testProviders(fakeReader(t, cluster("edge", 0, 7)))

	value, err := custom.GetMetricByName(context.Background(), types.NamespacedName{Namespace: testNamespace, Name: "edgee"},
		clustersInfo(), labels.Everything())
	if err == nil {
		t.Fatalf("answered %s = %d, want a not-found error", value.DescribedObject.Name, value.Value.Value())
	}
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `"edgee" not found`) {
		t.Errorf("error %q, want a not-found error naming the Cluster", err)
	}
}

func TestTargetsPresentRefusesUnknownMetricsAndResources(t *testing.T) {
	custom, _ := testProviders(fakeReader(t))
	for _, info := range []provider.CustomMetricInfo{
		{GroupResource: podsResource, Namespaced: true, Metric: "cpu"},
		{GroupResource: podsResource, Namespaced: false, Metric: TargetsPresentMetric},
		{GroupResource: clustersResource, Metric: TargetsPresentMetric, Namespaced: false},
	} {
		if _, err := custom.GetMetricBySelector(context.Background(), testNamespace, labels.Everything(), info, labels.Everything()); err == nil {
			t.Errorf("%s: want a not-found error", info)
		}
	}
}
