package metricsadapter

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestPlacementMetricsExportEachClustersStatusAsGauges(t *testing.T) {
	edge := cluster("edge", 7, 50, 50, 0)
	edge.Spec.Replicas = ptr.To[int32](3)
	edge.Status.TargetsCount = 109
	edge.Status.SkippedTargets = 2
	edge.Status.PodCapacity = 50
	edge.Status.Collectors[1].TunnelTargetsCount = 3 // dial-in devices take room on the pod they reached
	edge.Status.TunnelTargets = 3
	edge.Status.TargetUnits, edge.Status.UnassignedUnits = 140, 21
	edge.Status.Collectors[0].TargetUnits, edge.Status.Collectors[1].TargetUnits = 60, 59
	edge.Status.PodStatuses = map[string][]string{
		operatorv1alpha1.PodReady:       {"edge-0", "edge-1"},
		operatorv1alpha1.PodUnavailable: {"edge-2"},
	}
	edge.Status.Conditions = []metav1.Condition{
		{Type: operatorv1alpha1.ConditionCapacityExhausted, Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonInsufficientCapacity},
		{Type: operatorv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "PodsUnavailable"},
	}
	collector := newPlacementCollector()
	collector.use(fakeReader(t, edge))

	want := `
# HELP gnmic_cluster_condition 1 when the Cluster's condition of this type is True, 0 otherwise; reason is the condition's reason.
# TYPE gnmic_cluster_condition gauge
gnmic_cluster_condition{cluster="edge",namespace="telemetry",reason="InsufficientCapacity",type="CapacityExhausted"} 1
gnmic_cluster_condition{cluster="edge",namespace="telemetry",reason="PodsUnavailable",type="Ready"} 0
# HELP gnmic_cluster_pods Collector pods by state (status.podStatuses): Ready, Holding, Unavailable, ConfigFailed.
# TYPE gnmic_cluster_pods gauge
gnmic_cluster_pods{cluster="edge",namespace="telemetry",state="ConfigFailed"} 0
gnmic_cluster_pods{cluster="edge",namespace="telemetry",state="Holding"} 0
gnmic_cluster_pods{cluster="edge",namespace="telemetry",state="Ready"} 2
gnmic_cluster_pods{cluster="edge",namespace="telemetry",state="Unavailable"} 1
# HELP gnmic_cluster_replicas Collector pods the Cluster asks for (spec.replicas, which an autoscaler writes).
# TYPE gnmic_cluster_replicas gauge
gnmic_cluster_replicas{cluster="edge",namespace="telemetry"} 3
# HELP gnmic_cluster_skipped_targets Selected targets whose configuration cannot be rendered, sent to no collector (status.skippedTargets).
# TYPE gnmic_cluster_skipped_targets gauge
gnmic_cluster_skipped_targets{cluster="edge",namespace="telemetry"} 2
# HELP gnmic_cluster_target_units Weight of the targets placement places plus the dial-in devices, in podCapacity's units (status.targetUnits): the demand, equal to targets_demand when the Cluster places by count.
# TYPE gnmic_cluster_target_units gauge
gnmic_cluster_target_units{cluster="edge",namespace="telemetry"} 140
# HELP gnmic_cluster_targets Targets the Cluster's pipelines select (status.targetsCount).
# TYPE gnmic_cluster_targets gauge
gnmic_cluster_targets{cluster="edge",namespace="telemetry"} 109
# HELP gnmic_cluster_targets_present Targets the Cluster's collector pods hold: those they acknowledged and the dial-in devices they run.
# TYPE gnmic_cluster_targets_present gauge
gnmic_cluster_targets_present{cluster="edge",namespace="telemetry"} 103
# HELP gnmic_cluster_tunnel_targets Dial-in devices the Cluster's collector pods run through their tunnel servers (status.tunnelTargets).
# TYPE gnmic_cluster_tunnel_targets gauge
gnmic_cluster_tunnel_targets{cluster="edge",namespace="telemetry"} 3
# HELP gnmic_cluster_unassigned_target_units Weight of the targets no collector pod of the Cluster could take (status.unassignedUnits).
# TYPE gnmic_cluster_unassigned_target_units gauge
gnmic_cluster_unassigned_target_units{cluster="edge",namespace="telemetry"} 21
# HELP gnmic_cluster_unassigned_targets Targets no collector pod of the Cluster could take (status.unassignedTargets).
# TYPE gnmic_cluster_unassigned_targets gauge
gnmic_cluster_unassigned_targets{cluster="edge",namespace="telemetry"} 7
# HELP gnmic_cluster_pod_capacity Per-pod capacity placement used last (status.podCapacity).
# TYPE gnmic_cluster_pod_capacity gauge
gnmic_cluster_pod_capacity{cluster="edge",namespace="telemetry"} 50
# HELP gnmic_collector_target_units Weight of the targets placed on the collector pod, its load in podCapacity's units (status.collectors[].targetUnits).
# TYPE gnmic_collector_target_units gauge
gnmic_collector_target_units{cluster="edge",namespace="telemetry",pod="edge-0"} 60
gnmic_collector_target_units{cluster="edge",namespace="telemetry",pod="edge-1"} 59
gnmic_collector_target_units{cluster="edge",namespace="telemetry",pod="edge-2"} 0
# HELP gnmic_collector_targets Targets in the configuration the collector pod acknowledged (status.collectors[].targets).
# TYPE gnmic_collector_targets gauge
gnmic_collector_targets{cluster="edge",namespace="telemetry",pod="edge-0"} 50
gnmic_collector_targets{cluster="edge",namespace="telemetry",pod="edge-1"} 50
gnmic_collector_targets{cluster="edge",namespace="telemetry",pod="edge-2"} 0
# HELP gnmic_collector_tunnel_targets Dial-in devices the collector pod runs through its tunnel server (status.collectors[].tunnelTargetsCount).
# TYPE gnmic_collector_tunnel_targets gauge
gnmic_collector_tunnel_targets{cluster="edge",namespace="telemetry",pod="edge-0"} 0
gnmic_collector_tunnel_targets{cluster="edge",namespace="telemetry",pod="edge-1"} 3
gnmic_collector_tunnel_targets{cluster="edge",namespace="telemetry",pod="edge-2"} 0
`
	if err := testutil.CollectAndCompare(collector, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestPlacementMetricsExportNothingBeforeTheCacheIsSet(t *testing.T) {
	if n := testutil.CollectAndCount(newPlacementCollector()); n != 0 {
		t.Fatalf("collected %d series without a reader, want 0", n)
	}
}
