package cluster

import (
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// nextLook is when the Cluster must be looked at again although nothing in the API changed: when a pod's
// grace period ends, when a domain's waiting pods reach their startup timeout, when a failed target may be
// restarted, when a handover wait times out or a repair falls due, when a Target's first status that waited
// is due, soon while collectors still work off what they were sent, or the collector polling backstop.
func (r *Reconciler) nextLook(plan placementPlan, runtimes collectorRuntimes, pushed pushResults, nextRestart,
	silenceEnds, domainBlocks, firstStatusDue time.Time) time.Duration {
	next := r.PollInterval
	if anyStarting(runtimes, pushed) {
		next = min(next, startingLook)
	}
	if len(pushed.applyingPods()) > 0 {
		// Collectors' events wake the Cluster as they act; this is the backstop for dropped events.
		next = min(next, applyingLook)
	}
	now := r.now()
	for _, at := range []time.Time{plan.availability.GraceEnds, nextRestart, pushed.decision.NextLook, silenceEnds, domainBlocks,
		firstStatusDue} {
		if !at.IsZero() {
			next = min(next, max(at.Sub(now), 100*time.Millisecond))
		}
	}
	return max(next, 100*time.Millisecond)
}

// applyingLook is how soon a Cluster whose collectors still work off their changes is looked at again when no
// collector event wakes it first.
const applyingLook = time.Second

// cacheBehindLook is how soon a Cluster is looked at again when a Target's entry changed before the cache
// showed the operator's last write of it.
const cacheBehindLook = time.Second

// startingLook is how soon a Cluster with targets still starting is looked at again when no collector event
// wakes it first.
const startingLook = 5 * time.Second

// anyStarting tells whether a target sent to a collector is on its way to collecting: not listed yet, or
// listed and starting. A failed target's restart schedules its own look; a running target that does not
// collect (a lost device, a stopped subscription) changes through the collector's events and the poll.
func anyStarting(runtimes collectorRuntimes, pushed pushResults) bool {
	for ordinal, pp := range pushed.pods {
		if !pp.considered {
			continue
		}
		if rt := runtimes[ordinal]; rt.ListsExactly(pp.step.Send) {
			// It lists exactly what it was sent: one look at the read's summary.
			if rt.AnyStarting() {
				return true
			}
			continue
		}
		for _, name := range pp.step.Send {
			st, ok := runtimes.runs(ordinal, name)
			if !ok || st.State == gnmic.StateStarting || st.State == "" {
				return true
			}
		}
	}
	return false
}
