package metricsadapter

// Names of the metrics the operator serves. They are part of the public contract: HPA objects name them.
const (
	// TargetsPresentMetric is the custom metric of pods (targets a collector pod acknowledged) and of
	// Clusters (the sum over their pods).
	TargetsPresentMetric = "gnmic_targets_present"
	// UnassignedTargetsMetric is the external metric of targets no collector pod could take.
	UnassignedTargetsMetric = "unassigned_targets"
	// TargetsDemandMetric is the external metric of every target a Cluster's pipelines select (assigned and
	// unassigned): divided by podCapacity it is the number of pods the Cluster needs.
	TargetsDemandMetric = "targets_demand"
	// TargetUnitsDemandMetric is the external metric of the weight, in podCapacity's units, of every target a
	// Cluster's pipelines select and placement places (status.targetUnits): divided by podCapacity it is the
	// number of pods a Cluster that weighs its targets needs. It equals targets_demand when the Cluster
	// places by count.
	TargetUnitsDemandMetric = "target_units_demand"
	// UnassignedTargetUnitsMetric is the external metric of the weight of the targets no collector pod could
	// take (status.unassignedUnits). It equals unassigned_targets when the Cluster places by count.
	UnassignedTargetUnitsMetric = "unassigned_target_units"

	// ClusterMetricLabel labels every external metric value with the name of its Cluster.
	ClusterMetricLabel = "cluster"
)
