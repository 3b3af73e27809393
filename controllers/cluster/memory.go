package cluster

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/internal/fleetmemo"
	"github.com/gnmic-operator/gnmic-operator/internal/handover"
)

// clusterMemory is everything the reconciler remembers of one Cluster between two reconciles, beyond what
// the API server and the collectors say. Its one staleness rule: each part is rebuilt by every reconcile from
// what still exists (pods, Targets, collectors), so it never outgrows the fleet, and the whole is dropped
// with the Cluster; only a target's restart backoff waits for the target to run again (or for the Cluster to
// go). Reconciles of one Cluster never overlap, so a reconcile owns its Cluster's memory.
//
// (What each collector acknowledged lives in the collector.Ledger instead: it speaks for one collector
// process, whatever Cluster reconcile reads it.)
type clusterMemory struct {
	// missingSince is when each desired pod ordinal now missing was first seen missing: the grace period of a
	// pod that is not recreated runs from then.
	missingSince map[int]time.Time
	// silentSince is since when each collector asked and not answering has been silent.
	silentSince map[types.UID]time.Time
	// handover is what one handover decision hands to the next.
	handover handover.Memory
	// written is the state last written per Target, and gates the readiness-gate condition last written per
	// pod: the cache may not show the operator's own writes yet, and a stale view must not write twice.
	written map[string]writtenState
	gates   map[string]configuredWrite
	// unwrittenSince is since when this process has found each selected Target without an entry for the
	// Cluster while on its way to its first collector (firstStatusWait runs from then); an entry goes once the
	// Target's entry is written, or with the Target.
	unwrittenSince map[string]seenAt
	// refusingSince is since when each pod (by UID) has refused its configuration for reasons of its own:
	// past the grace period it leaves placement (rejection.Track, rejection.Exclude).
	refusingSince map[types.UID]time.Time
	// domainWaits is, per domain of a Cluster with domains, since when it has been waiting for pods to start
	// (domains.WaitingSince), and domainDesired how many pods the last split gave it: desired pods that do
	// not exist count as not started.
	domainWaits   map[string]time.Time
	domainDesired map[string]int
	// verdict is what the collectors last said of the part of the configuration every pod receives alike.
	verdict sharedVerdict
	// restarts spaces the restarts of the targets whose start failed.
	restarts restartBackoff
	// outputHealth is what this reconcile read of the outputs and inputs the collectors hold; failedComponents
	// what the last one that knew any collector's state reported failed (kind/name/pod → reason), so that
	// a failure is announced once (output_health.go); nil until then, and then first taken from what the
	// Outputs' and Inputs' statuses say, so that an operator restart announces nothing again.
	outputHealth     outputHealth
	failedComponents map[string]string
	// failedMetricPods are the pods whose failed outputs and inputs the metrics show (fleetmetrics.SetFailedComponents).
	failedMetricPods []string
	// outputsKnownOnce is true once this operator knew the output and input states of some collector of the
	// Cluster: until then the OutputsRunning condition in its status is what the operator before read, and
	// stays as it is (an operator restart is no news of the outputs).
	outputsKnownOnce bool
	// staleTargets is how many targets the collectors ran, as last read, that they were not sent: a warning
	// is raised when it grows.
	staleTargets int
	// monitors is, per ServiceMonitor of the Cluster's prometheus outputs, when the operator last found it as
	// it wants it (scrape.go); an entry goes with its ServiceMonitor.
	monitors map[string]monitorCheck
	// saidCRDMissing is true once the Cluster was told that the ServiceMonitor CRD is missing, until it is not.
	saidCRDMissing bool
	// saidTooOld is what the Cluster was last warned its collectors lack, image by image (without the pods, so
	// that the second pod of the same image answering is no news); empty while nothing is missing.
	saidTooOld string
	// saidPortConflicts is the port conflicts the Cluster was last warned of, empty while there are none.
	saidPortConflicts string
	// monitorErrLogged is the ServiceMonitor write failure last logged, empty after a success.
	monitorErrLogged string
	// saidNamesTaken is the objects the Cluster needs that are someone else's, of which it was last warned;
	// empty while there are none.
	saidNamesTaken string
	// targets is the namespace's Targets as last listed (observe.go's listTargets).
	targets listedTargets
	// fleet remembers each selected target's rendered configuration and each pod's cut of the fleet's
	// (fleetmemo.Memo has its rule).
	fleet fleetmemo.Memo
	// placeable is what world.placeable gave for the fleet memory's last selection and rendering.
	placeable []string
	// placed is the last placement and what it was computed from: a reconcile whose placement reads the
	// same places nothing again (place.go).
	placed *placedFleet
	// load is what the Cluster measured of its targets' response rates (measure.go): nil unless it weighs by
	// Measured.
	load *measuredLoad
}

// memoryOf is the Cluster's memory, empty the first time.
func (r *Reconciler) memoryOf(cluster types.NamespacedName) *clusterMemory {
	m, _ := r.memories.LoadOrStore(cluster, &clusterMemory{})
	return m.(*clusterMemory)
}
