// Package balancer is the Balancer reconciler (docs/balancer.md): it keeps one autoscaled number of replicas
// spread over several workloads (zones, node pools) by a policy. Each look reads every target's scale
// subresource and pods (observe.go), asks the pure internal/balance core how many replicas each runs
// (decide.go), writes the scales that differ (scale.go), reports status and events (status.go, events.go) and
// says when to look again (look.go).
//
// Under a sharded operator each Balancer runs on the one replica the members' rendezvous gives it to; the
// reconciler asks only that (Assigner) and knows nothing else of sharding.
package balancer
