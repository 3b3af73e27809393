package cluster

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/fleetmetrics"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// emitEvents reports moves (aggregated into one event), push failures and skipped targets.
func (r *Reconciler) emitEvents(cluster *operatorv1alpha1.Cluster, plan placementPlan, pushed pushResults) {
	fleetmetrics.StartCounting(cluster.Namespace, cluster.Name)
	fleetmetrics.MovesTotal.WithLabelValues(cluster.Namespace, cluster.Name).Add(float64(len(plan.result.Moves)))
	fleetmetrics.PushFailuresTotal.WithLabelValues(cluster.Namespace, cluster.Name).Add(float64(len(pushed.retriedPods())))
	r.reportHandovers(cluster, pushed)
	if moves := plan.result.Moves; len(moves) > 0 {
		r.Recorder.Eventf(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventTargetsMoved, "moved %d target(s) (lower bound %d): %s",
			len(moves), plan.result.LowerBoundMoves, describeMoves(cluster, moves, 10))
	}
	if n := plan.result.Returned; n > 0 {
		r.Recorder.Eventf(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventTargetsReturned,
			"%d target(s) went back to the pod they were on before it stopped being ready", n)
	}
	if shared := pushed.sharedRejections(); len(shared) > 0 {
		r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventConfigurationRejected,
			"%d pod(s) refuse the Cluster's outputs, inputs or processors; they keep what they hold: %s",
			len(shared), rejectionOf(pushed, shared[0]))
	}
	for _, pp := range pushed.pods {
		if pp.err != nil && !pp.sharedRejection && !pp.unsupported { // the too old: CollectorsSupported's event
			r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventPushFailed, "pod %s: %v", pp.pod.Name, pp.err)
		}
	}
	r.emitRefusingPodsEmptied(cluster, plan, pushed)
	if len(pushed.skipped) > 0 {
		var names []string
		for _, s := range pushed.skipped {
			names = append(names, s.Error())
		}
		r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventTargetsSkipped, "left out of the configuration: %s",
			strings.Join(first(names, 5), "; "))
	}
}

func describeMoves(cluster *operatorv1alpha1.Cluster, moves []placement.Move, limit int) string {
	var parts []string
	for _, m := range first(moves, limit) {
		to := "unassigned"
		if m.To != placement.NoPod {
			to = workload.PodName(cluster, m.To)
		}
		parts = append(parts, fmt.Sprintf("%s %s→%s", m.Target, workload.PodName(cluster, m.From), to))
	}
	if len(moves) > limit {
		parts = append(parts, fmt.Sprintf("and %d more", len(moves)-limit))
	}
	return strings.Join(parts, ", ")
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// reportHandovers reports repairs, overlaps and stale targets in events and the operator's metrics, and
// remembers how many targets are stale: a warning is raised when they grow.
func (r *Reconciler) reportHandovers(cluster *operatorv1alpha1.Cluster, pushed pushResults) {
	stale := 0
	for _, pp := range pushed.pods {
		if !pp.considered {
			continue
		}
		stale += len(pp.step.Stale)
		if n := len(pp.step.Repaired); n > 0 && pp.pushed {
			fleetmetrics.RepairsTotal.WithLabelValues(cluster.Namespace, cluster.Name).Add(float64(n))
			r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventTargetsRepaired,
				"pod %s dropped %d target(s) it was sent; removing and sending them again: %s", pp.pod.Name, n,
				strings.Join(first(pp.step.Repaired, 10), ", "))
		}
	}
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	if stale > memory.staleTargets {
		var parts []string
		for _, pp := range pushed.pods {
			if pp.considered && len(pp.step.Stale) > 0 {
				parts = append(parts, fmt.Sprintf("%s runs %s", pp.pod.Name, strings.Join(first(pp.step.Stale, 5), ", ")))
			}
		}
		sort.Strings(parts)
		r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventStaleTargets,
			"collectors run %d target(s) they were not sent (a removal they dropped): %s", stale, strings.Join(parts, "; "))
	}
	memory.staleTargets = stale
	fleetmetrics.StaleTargets.WithLabelValues(cluster.Namespace, cluster.Name).Set(float64(stale))
	var overlaps []string
	for _, o := range pushed.decision.Overlaps {
		if pp := pushed.pods[o.To]; pp != nil && pp.pushed {
			overlaps = append(overlaps, fmt.Sprintf("%s (to %s after %s)", o.Target, pp.pod.Name, o.Waited.Round(time.Second)))
		}
	}
	if len(overlaps) > 0 {
		fleetmetrics.HandoverOverlapsTotal.WithLabelValues(cluster.Namespace, cluster.Name).Add(float64(len(overlaps)))
		r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventHandoverOverlap,
			"%d target(s) moved before their old collector confirmed dropping them; both may collect them for a while: %s",
			len(overlaps), strings.Join(first(overlaps, 10), ", "))
	}
}

// emitRefusingPodsEmptied reports, per pod left out of placement because it refused its configuration for
// longer than the grace period, the targets this reconcile moves off it.
func (r *Reconciler) emitRefusingPodsEmptied(cluster *operatorv1alpha1.Cluster, plan placementPlan, pushed pushResults) {
	movedOff := map[int]int{}
	for _, m := range plan.result.Moves {
		if _, refusing := plan.refusing[m.From]; refusing {
			movedOff[m.From]++
		}
	}
	ordinals := make([]int, 0, len(movedOff))
	for o := range movedOff {
		ordinals = append(ordinals, o)
	}
	sort.Ints(ordinals)
	for _, o := range ordinals {
		pod := workload.PodName(cluster, o)
		msg := fmt.Sprintf("pod %s refused its configuration for longer than the grace period (%s, since %s): moved its %d "+
			"target(s) to other pods", pod, plan.grace, plan.refusing[o].UTC().Format(time.RFC3339), movedOff[o])
		if why := rejectionOf(pushed, pod); why != "" {
			msg += "; its collector says: " + why
		}
		r.Recorder.Event(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventRefusingPodEmptied, msg)
	}
}

// rejectionOf is the collector's own words for a pod's refused push.
func rejectionOf(pushed pushResults, pod string) string {
	for _, pp := range pushed.pods {
		if pp.pod.Name == pod && pp.err != nil {
			var rejected *gnmic.ConfigRejectedError
			if errors.As(pp.err, &rejected) {
				return strings.Join(rejected.Errors, "; ")
			}
			return pp.err.Error()
		}
	}
	return ""
}
