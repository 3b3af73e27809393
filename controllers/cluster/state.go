package cluster

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/internal/fleetmetrics"
)

// remembered is what the reconciler keeps between reconciles beyond what the API server and the collectors
// say. Each part has one job and one rule for when an entry goes; forget drops a Cluster from all of them.
type remembered struct {
	// memories holds one clusterMemory per Cluster (memory.go), each rebuilt by every reconcile from
	// what still exists.
	memories sync.Map
	// ledger is what each collector process acknowledged and last reported running: an entry speaks for one
	// pod UID and container restart count.
	ledger *collector.Ledger
	// streams follow the event streams of the ready pods each Cluster's last reconcile named.
	streams *collector.Streams
	// credentials keeps the client TLS configuration of each Cluster, and the contents of the Secrets read at
	// their resourceVersion.
	credentials *credentials.Keeper
	// wakes keeps each Cluster's burst window.
	wakes *wakes
	// targetChanges counts the Target changes of each namespace, so that a reconcile can reuse its last list of
	// the namespace's Targets; nil: every reconcile lists them.
	targetChanges *targetChanges
	// nodes are the Nodes seen missing, not a Cluster's: an entry goes when its Node is seen again.
	nodes nodeLosses
}

// forget drops everything the reconciler remembers of a Cluster, and its metrics.
func (r *Reconciler) forget(cluster types.NamespacedName) {
	r.memories.Delete(cluster)
	r.ledger.ForgetCluster(cluster)
	r.streams.Forget(cluster)
	r.credentials.Forget(cluster)
	r.wakes.forget(cluster)
	fleetmetrics.ForgetCluster(cluster.Namespace, cluster.Name)
}

// letGo forgets a Cluster this replica no longer reconciles (sharding drained it, or another replica owns it).
// Every event of a Cluster another replica owns comes here: it returns at once when the Cluster's memory is
// not held, since a reconcile makes the memory before it opens collector streams or records what the
// collectors acknowledged.
func (r *Reconciler) letGo(cluster types.NamespacedName) {
	if _, held := r.memories.Load(cluster); !held {
		return
	}
	r.forget(cluster)
}
