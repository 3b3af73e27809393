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

	// ClusterMetricLabel labels every external metric value with the name of its Cluster.
	ClusterMetricLabel = "cluster"
)
