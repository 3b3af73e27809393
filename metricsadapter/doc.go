// Package metricsadapter serves the metrics APIs that the HorizontalPodAutoscaler reads, from the operator
// binary itself, so that collector fleets scale without Prometheus Adapter:
//
//   - custom.metrics.k8s.io (v1beta1 and v1beta2): gnmic_targets_present, the number of targets a collector
//     pod acknowledged (status.collectors[].targets of its Cluster), for every pod a label selector matches
//     (0 for a pod without a status entry), and the Cluster's total on the Cluster object;
//   - external.metrics.k8s.io (v1beta1): unassigned_targets (status.unassignedTargets) and targets_demand
//     (status.targetsCount) per Cluster, and the same in weight units for Clusters that weigh their targets:
//     unassigned_target_units (status.unassignedUnits) and target_units_demand (status.targetUnits).
//
// Both APIs select Clusters alike (cluster_selection.go): a selector is matched against the Cluster's own
// labels plus cluster=<name>, the name winning over an own label of that key. A Cluster that exists always
// answers a value, 0 included. A request that finds no Cluster (a name that does not exist, a selector
// matching none) is a NotFound error naming what is missing, never a 0: the autoscaler would read 0 as "scale
// to minReplicas", while an error makes it hold the current size and show the message in its conditions.
//
// Every value is read from the manager's cache, never from leader memory, so any operator replica answers
// the same and the metrics server runs on followers too. No answer is an empty list, which the autoscaler
// treats as an error without a reason: a pod selector matching no pod answers one item of value 0.
//
// The package also keeps the serving certificate (generated and rotated with cert-controller), registers
// the APIService objects with its CA bundle and never touches an APIService that another component (for
// example KEDA) owns: it reports the conflict instead. See docs/metrics.md.
package metricsadapter
