// Package workload builds the Kubernetes objects that run a Cluster's
// collector pods: a StatefulSet, its headless Service, the ConfigMap with the
// collectors' bootstrap configuration, a PodDisruptionBudget, the Secret
// with the TLS files of its targets, and a NetworkPolicy that admits only the
// operator to the collectors' REST API (and anyone, or the peers the spec
// names, to the ports the outputs listen on).
//
// The builders are pure: they take a Cluster and Options and return the
// desired objects, equal for equal inputs, without talking to the API server
// and without owner references (the reconciler sets those and applies the
// objects). Every object is named after the Cluster and labelled with
// operator.gnmic.dev/cluster=<name>, which is also the pods' selector, so pod
// <cluster>-<ordinal> answers at <pod>.<cluster>.<namespace>.svc. A Cluster
// with spec.domains runs one StatefulSet per domain instead (DomainStatefulSet,
// <cluster>-<domain>, its pods also labelled operator.gnmic.dev/domain), all
// governed by the one headless Service; PodName and PodOrdinal then map a
// pod's placement number (internal/domains) to <cluster>-<domain>-<ordinal>
// and back. A collector
// pod starts with only the bootstrap file: its REST API address, metrics and
// logging, and mutual TLS unless spec.api.insecure opts out. Everything it collects is pushed
// later through that API (package render builds it), so a change to what a
// Cluster collects does not restart its pods. The TLS files of its targets
// reach the pods the same way: every pod mounts the Cluster's one target TLS
// Secret (TargetTLSSecret, <cluster>-target-tls) at a fixed path, whatever
// targets need, and only that Secret's data changes with them. A change to
// the bootstrap file does restart the pods, through a checksum annotation on
// the pod template.
//
// Drift compares a live object with what the builders make of it, field by
// field but only over what the builders set, so that the reconciler restores
// what someone changed by hand without fighting the API server's defaults.
package workload
