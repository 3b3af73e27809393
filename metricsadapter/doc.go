// Package metricsadapter serves the metrics APIs that the HorizontalPodAutoscaler reads, from the operator
// binary itself, so that collector fleets scale without Prometheus Adapter:
//
//   - custom.metrics.k8s.io (v1beta1 and v1beta2): gnmic_targets_present, the number of targets a collector
//     pod acknowledged (status.collectors[].targets of its Cluster), for every pod a label selector matches
//     (0 for a pod without a status entry), and the Cluster's total on the Cluster object;
//   - external.metrics.k8s.io (v1beta1): unassigned_targets (status.unassignedTargets) and targets_demand
//     (status.targetsCount) per Cluster, labelled cluster=<name>.
//
// Every value is read from the manager's cache, never from leader memory, so any operator replica answers
// the same and the metrics server runs on followers too. Every answer holds at least one item: the
// autoscaler treats an empty list as an error and stops scaling on that metric.
//
// The package also keeps the serving certificate (generated and rotated with cert-controller), registers
// the APIService objects with its CA bundle and never touches an APIService that another component (for
// example KEDA) owns: it reports the conflict instead. See docs/metrics.md.
package metricsadapter
