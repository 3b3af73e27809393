// Package cluster is the Cluster reconciler: it runs a fleet of gNMIc collectors for each Cluster. One reconcile
// reads the Cluster's world once (observe.go), splits its replicas over its domains (domains.go), keeps its
// workload as the spec says (workload.go), places every target on a pod with the bounded-load rendezvous core
// (place.go, internal/placement), reads what each collector runs (collectors.go), pushes each one handover step
// (push.go, internal/handover), sets the pods' readiness gates (readiness_gates.go), restarts failed targets
// (restarts.go), writes the status of the Targets, the Cluster and what its Pipelines select, and says when to
// look again (next_look.go).
//
// What it remembers between reconciles is in state.go (one forget per Cluster) and memory.go; why a Cluster is
// reconciled when no watched object changed is wakes.go; the kinds it owns and watches are one table
// (setup.go). Under sharding it asks controllers/sharding, and only that, whether it reconciles a Cluster and
// may push now (sharding.go).
package cluster
