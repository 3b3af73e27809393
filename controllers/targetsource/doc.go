// Package targetsource is the TargetSource controller (docs/target-sources.md): each sync fetches the
// inventory through its provider (internal/inventory), maps every record to a Target with the CEL mapping
// (internal/targetmapping), plans creates, updates, deletes and missing marks with the sync core
// (internal/targetsync) against the Targets of the namespace, writes the plan in bounded batches, and reports
// in status. A sync that fails, or whose answer looks truncated, writes no Target.
//
// Misses are counted in syncs (status.syncs), and a missing Target carries the sync it was first missing from
// (annotation operator.gnmic.dev/missing-since): a restart, or another replica taking over, counts on from
// there, and the sync number only advances through a status update that fails on conflict, so two replicas
// briefly syncing at once cannot count one sync twice.
//
// A provider is added with one case in newProvider (provider.go) that returns how to build its
// inventory.Provider and what it read (for the fingerprint that rebuilds it), a name in providerName, and its
// field in the CRD's one-of rule. A provider that learns of a new snapshot between syncs (a push) calls Wake.
package targetsource
