// Package controllers holds the operator's reconcilers, one package per subsystem, each a thin shell that reads
// state from the cache, calls a pure core in internal/ and writes the result back:
//
//	cluster/      the Cluster reconciler: a collector fleet, its placement, pushes, handovers and status
//	balancer/     the Balancer reconciler: replicas spread over several scalable workloads
//	sharding/     the operator's own replicas sharing the Clusters: member Leases, assignment rounds,
//	              takeovers and drains, the caches of each replica's share
//	collector/    reaching collector pods: the REST client's dialer, event streams, the ledger of what each
//	              collector acknowledged
//	credentials/  the certificates, keys and TLS files the operator keeps in a Cluster's Secrets
//	conflict/     a write conflict as a prompt retry
//
// The arrows point down: cluster uses sharding, collector, credentials and conflict; balancer uses conflict;
// sharding, collector, credentials and conflict use none of the others. main wires them (manager.go).
// docs/development.md has the map with what each package may touch.
//
// This package itself holds the permissions they share (rbac.go) and the envtest suite that runs them against
// a real kube-apiserver, as the operator's binary wires them.
package controllers
