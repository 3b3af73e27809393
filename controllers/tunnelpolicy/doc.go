// Package tunnelpolicy reconciles the status of TunnelTargetPolicies: whether each can be rendered (its match
// expressions parse, its TargetProfile and Subscriptions exist), which Clusters it applies to, and how many
// dial-in devices it matched that those Clusters' collectors run (read from the Clusters' status). Rendering
// the policies into the collectors' configuration is the Cluster reconciler's job (controllers/cluster,
// tunnel.go); the decisions both use are internal/tunnelpolicy's.
package tunnelpolicy
