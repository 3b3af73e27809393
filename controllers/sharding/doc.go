// Package sharding makes the operator's replicas share the Clusters (docs/sharding.md; the design of seeds 002
// and 004). Each replica is a Member: it renews a Lease of its own (leases.go), assigns every Cluster over the
// live members with the pure internal/shard core in rounds (assignment.go), takes over and drains Clusters as
// the assignment says, writing the owner and its generation in the Cluster's status.shard (turn.go), and caches
// only the objects of the Clusters it owns, its share (share_caches.go). A replica is ready once it holds its
// share (readiness.go).
//
// The Cluster reconciler asks a Member three things per Cluster: may it reconcile now (Turn), may it push now
// (Fence: the owner at the reconcile's generation, with a valid Lease), and does it clean up after a deleted
// Cluster (CleansUp). It gives the Member, at setup, what sharding needs of it (Serve); this package never sees
// the reconciler.
package sharding
