// Package metricsadapter will serve custom.metrics.k8s.io and external.metrics.k8s.io from the operator
// binary (gnmic_targets_present per collector pod, unassigned_targets per Cluster), so that the
// HorizontalPodAutoscaler sizes collector fleets without Prometheus Adapter. See docs/metrics.md.
package metricsadapter
