// Package clusterplacement places one Cluster's targets on its collector pods: it turns what a reader
// observed of a Cluster (its spec, which of its pods can take targets, the targets its Pipelines select and
// where their statuses record them) into placement's input, runs placement, and derives the last pods the
// Targets' statuses record next.
//
// The Cluster reconciler and `gnmic-operator plan --cluster` both call it, so that a plan is computed by
// the code that then moves the targets. It imports no Kubernetes client: each caller reads the objects its
// own way and feeds them in.
package clusterplacement
