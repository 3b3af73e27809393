// Package domains decides, for a Cluster spread over failure domains (zones,
// node pools), how many collector pods each domain's StatefulSet runs, and
// gives every pod of every domain one stable number that placement keys on.
//
// The split is the Balancer's core (internal/balance) with the domains as its
// targets: every domain gets its minimum, the policy (priority or
// proportional; evenly when none is given) spreads the rest of the Cluster's
// replicas within the maximums, and with a startup timeout a domain whose
// oldest not-started pod waited longer is blocked and its replicas that have
// not started run as replacements in the other domains until its pods start.
//
// Placement works on pod numbers (internal/placement scores a target against
// an int). A domain's pod <cluster>-<domain>-<ordinal> is numbered
// Slot(index, ordinal) = index·Stride + ordinal, index being the domain's
// position in spec.domains. The number of a pod never changes while the
// domains keep their order, so targets stay on their pods across reconciles
// and across domain scale changes; a Cluster without domains numbers its pods
// by their ordinal alone, as it always did.
//
// The package knows nothing of Kubernetes: the reconciler counts each
// domain's pods, calls Split, and writes each Desired to the domain's
// StatefulSet.
package domains
