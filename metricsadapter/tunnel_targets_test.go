package metricsadapter

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// Dial-in devices (spec.grpcTunnel) run on the pod their tunnel reached and take its capacity like placed
// targets: the autoscaling metrics count them (docs/dial-in.md).

func TestTargetsPresentOfAPodCountsTheDialInDevicesItRuns(t *testing.T) {
	c := cluster("edge", 0, 7, 5)
	c.Status.Collectors[1].TunnelTargetsCount = 2
	custom, _ := testProviders(fakeReader(t, c, collectorPod("edge", 0), collectorPod("edge", 1)))
	for pod, want := range map[string]int64{"edge-0": 7, "edge-1": 7} {
		value, err := custom.GetMetricByName(context.Background(), types.NamespacedName{Namespace: testNamespace, Name: pod},
			podsInfo(), labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		if value.Value.Value() != want {
			t.Errorf("pod %s: %d targets present, want %d", pod, value.Value.Value(), want)
		}
	}
	if got := clusterTargetsPresent(c); got != 14 {
		t.Errorf("cluster: %d targets present, want 14 (12 acknowledged, 2 dial-in)", got)
	}
}

func TestTargetsDemandCountsTheDialInDevicesTheCollectorsRun(t *testing.T) {
	c := cluster("edge", 2, 10, 5)
	c.Status.TunnelTargets = 4
	_, external := testProviders(fakeReader(t, c))
	if got := externalValues(t, external, TargetsDemandMetric, "cluster=edge"); got["edge"] != 21 {
		t.Fatalf("demand %v, want 21: 15 assigned, 2 unassigned and 4 dial-in", got)
	}
}
