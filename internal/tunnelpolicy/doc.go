// Package tunnelpolicy holds the pure decisions about TunnelTargetPolicies: which Clusters a policy applies to
// (Selects), whether it can be rendered at all and why not (Check), and which policy a dial-in device was
// matched by (MatchedBy, gNMIc's rule: the first matching rule by name). The rendering of a policy into one of
// gNMIc's tunnel-target-matches lives with the other renderings, in internal/render (TunnelTargetMatches). It
// imports no Kubernetes client.
package tunnelpolicy
