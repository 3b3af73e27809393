// Package render turns what a Cluster selects into the gNMIc configuration
// one collector pod receives.
//
// PodConfig takes the Cluster's selection (package selection), the names of
// the targets placed on the pod, and the connection settings those targets
// need (TargetProfiles and the data of the Secrets they name), and returns a
// gnmic.Config in its Normalize form. Every pod gets every selected output and
// every selected input, with the processors they apply (each output's and
// input's chain as its event-processors, each processor as {type: config}),
// so that where data goes never depends on placement; a
// pod gets only the targets placed on it and the subscriptions those targets
// use. One bad object never blocks the others: a target whose profile or
// Secret is missing, an input without outputs, an output whose config does not
// decode are each left out and reported as a SkipError, and everything
// that depends on a skipped object is skipped with it. Every object that
// remains has passed gnmic.Config.Validate on its own, so the whole passes too.
//
// Credentials flow from Secrets into the Config and nowhere else: a target's
// from its profile's Secrets, an Output's or Input's from the Secrets its
// spec.secretRefs name (an object whose Secret or key is missing is skipped
// like any other). Errors name targets, profiles, Secrets and keys, never
// values. TLS material is not
// copied into the Config; it is referenced as files. BundleTLS decides which
// TLS files the Cluster's one target TLS Secret holds, each named
// <secret>__<key> (TLSFileName); package workload mounts that Secret at
// TLSRoot in every collector pod, so that a new TLS Secret changes the
// Secret's data, never the pod template.
package render
