package cluster

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/internal/rejection"
)

// A pod's own refusal of its configuration (other collectors of the Cluster take the same outputs and
// inputs, or only that pod cannot be pushed) that lasts longer than the grace period takes the pod out of
// placement: its targets go to pods that take their configuration. The pod is still pushed, and counts
// again once it accepts. The decisions are internal/rejection's (Track, Exclude); a refusal every pod shares
// is the configuration's fault and moves nothing (rejections.go).

// refusingPods are the ready pods that placement leaves out because they have refused their configuration
// for longer than the grace period, with since when.
func (r *Reconciler) refusingPods(memory *clusterMemory, w *world, ready []int, grace time.Duration) map[int]time.Time {
	return rejection.Exclude(rejection.Pods{Ready: ready, RefusingSince: refusingByOrdinal(memory, w), Grace: grace,
		Now: r.now()}).Excluded
}

// refusingByOrdinal is since when each existing pod has refused its configuration, by ordinal.
func refusingByOrdinal(memory *clusterMemory, w *world) map[int]time.Time {
	out := map[int]time.Time{}
	for ordinal, pod := range w.pods {
		if since, ok := memory.refusingSince[pod.UID]; ok {
			out[ordinal] = since
		}
	}
	return out
}

// withoutRefusing are the ready pods placement may use.
func withoutRefusing(ready []int, refusing map[int]time.Time) []int {
	if len(refusing) == 0 {
		return ready
	}
	out := make([]int, 0, len(ready))
	for _, ordinal := range ready {
		if _, left := refusing[ordinal]; !left {
			out = append(out, ordinal)
		}
	}
	return out
}

// trackRefusals remembers since when each pod has refused its configuration for reasons of its own, says
// on every pod left out of placement for it why (its status.collectors error, which its readiness gate
// repeats), and makes sure the Cluster is looked at when the next refusing pod's grace period ends, and
// again within a poll interval while a pod left out still refuses, to notice soon when it accepts: a refusing
// pod's push fails at every reconcile, and controller-runtime backs the retries of a failing reconcile off
// exponentially (up to 16 minutes), which would notice either late.
func (r *Reconciler) trackRefusals(key types.NamespacedName, memory *clusterMemory, plan placementPlan, results pushResults) {
	outcomes := make(map[types.UID]rejection.Outcome, len(results.pods))
	for _, pp := range results.pods {
		outcomes[pp.pod.UID] = pushOutcome(pp)
	}
	memory.refusingSince = rejection.Track(memory.refusingSince, outcomes, r.now())
	refusing := map[int]time.Time{}
	var next time.Time
	for ordinal, pp := range results.pods {
		since, ok := memory.refusingSince[pp.pod.UID]
		if !ok {
			continue
		}
		refusing[ordinal] = since
		if _, left := plan.refusing[ordinal]; left {
			pp.refusingSince = plan.refusing[ordinal]
			pp.status.Error = fmt.Sprintf("refused its configuration for longer than the grace period (%s): its targets moved to "+
				"other pods; %v", plan.grace, pp.err)
			next = r.now().Add(r.PollInterval)
		}
	}
	graceEnds := rejection.Exclude(rejection.Pods{Ready: plan.availability.Ready, RefusingSince: refusing, Grace: plan.grace,
		Now: r.now()}).GraceEnds
	if at := earliest(next, graceEnds); !at.IsZero() && r.wakes != nil {
		r.wakes.at(key, at)
	}
}

// pushOutcome is what the pod's push did in this reconcile.
func pushOutcome(pp *podPush) rejection.Outcome {
	switch {
	case !pp.considered, pp.unsupported:
		return rejection.NotTried // a collector without config apply refuses nothing: it is too old
	case pp.pushFailed && pp.sharedRejection:
		return rejection.SharedRejection
	case pp.pushFailed:
		return rejection.Refused
	case pp.err != nil:
		return rejection.NotTried // nothing could be rendered: the pod was not asked
	default:
		return rejection.Accepted
	}
}

// emptiedPods are the pods left out of placement because they refused their configuration for longer than
// the grace period, and still refuse it.
func (p pushResults) emptiedPods() []string {
	return p.podNames(func(pp *podPush) bool { return !pp.refusingSince.IsZero() })
}
