package metricsadapter

import (
	"context"
	"testing"

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

	for _, info := range []provider.CustomMetricInfo{podsInfo(), clustersInfo()} {
		list, err := custom.GetMetricBySelector(context.Background(), testNamespace, selector, info, labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Value.Value() != 0 {
			t.Errorf("%s: %d items, want one item of value 0", info.GroupResource, len(list.Items))
		}
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
