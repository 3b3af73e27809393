// Package olm proves the OLM bundle in bundle/: it loads it with the operator-framework API library,
// runs the validators `operator-sdk bundle validate` runs (default, OperatorHub, good practices,
// deprecated APIs for Kubernetes 1.37), re-implements the scorecard's basic and OLM test suites as
// plain tests over the bundle, and checks that the bundle still matches config/ (CRDs, the manager
// Deployment, the samples) and keeps its RBAC free of wildcards.
//
// Regenerate the bundle with `make bundle` after changing the API types or config/.
package olm
