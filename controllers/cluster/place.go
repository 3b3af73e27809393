package cluster

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/availability"
	"github.com/gnmic-operator/gnmic-operator/internal/clusterplacement"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
)

// placementPlan is where every selected target goes in this reconcile.
type placementPlan struct {
	availability availability.Result
	result       placement.Result
	// held are the targets that stay on a pod in its grace period, by ordinal: they are outside the placement
	// and keep their pod.
	held map[string]int
	// onPod lists, per ordinal, the targets the pod should hold once this reconcile is done.
	onPod map[int][]string
	// refusing are the ready pods left out of placement because they refused their configuration for longer
	// than the grace period, with since when (rejection.Exclude). They are still pushed, to notice when they
	// accept again.
	refusing map[int]time.Time
	// grace is the Cluster's grace period.
	grace time.Duration
	// last is the ordinal of the pod each target belongs on while it is not there (placement.Lasts): what
	// the targets' status.lastPod says after this reconcile.
	last map[string]int
	// version moves whenever the placement is made anew; the same version, the same placement (onPod, result,
	// held and last are shared with the Cluster's memory: read them only).
	version uint64
}

// assignment is the ordinal a target ends on, and whether it has one.
func (p placementPlan) assignment(target string) (int, bool) {
	if o, ok := p.held[target]; ok {
		return o, true
	}
	o, ok := p.result.Assignments[target]
	return o, ok
}

// place decides which pod holds each target: targets on pods within their grace period stay there, the rest
// go through bounded-load rendezvous placement over the ready pods (of every domain, on a Cluster with domains).
func (r *Reconciler) place(cluster *operatorv1alpha1.Cluster, w *world) placementPlan {
	grace := gracePeriod(cluster)
	pods := make([]availability.Pod, 0, len(w.desired))
	for ordinal, pod := range w.pods {
		ready, since := podReadiness(pod)
		if l, lost := w.lost[ordinal]; lost {
			ready, since = false, l.since
		}
		pods = append(pods, availability.Pod{Ordinal: ordinal, Ready: ready, UnreadySince: since})
	}
	// A missing pod has no condition to date its absence: its grace period runs from when this process first
	// saw it missing (an operator restart starts it again, which only ever waits longer).
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	wasMissing := memory.missingSince
	missing := map[int]time.Time{}
	for _, ordinal := range w.desired {
		if _, exists := w.pods[ordinal]; exists {
			continue
		}
		since, ok := wasMissing[ordinal]
		if !ok {
			since = r.now()
		}
		missing[ordinal] = since
		pods = append(pods, availability.Pod{Ordinal: ordinal, UnreadySince: since})
	}
	memory.missingSince = missing
	avail := availability.Classify(availability.Input{Replicas: len(w.desired), Desired: w.desired, Pods: pods, Grace: grace, Now: r.now()})

	plan := placementPlan{availability: avail, grace: grace}
	plan.refusing = r.refusingPods(memory, w, avail.Ready, grace)
	fleet := clusterplacement.Fleet{
		PodCapacity: clusterplacement.PodCapacity(cluster),
		Desired:     w.desired,
		Ready:       withoutRefusing(avail.Ready, plan.refusing),
		Holding:     avail.Holding,
		Placeable:   w.placeable(),
		Skipped:     w.skippedTargetNames(),
		Current:     w.current,
		Last:        w.last,
		Weights:     w.weights,
	}
	// A steady fleet is placed as it was: placement is pure, and nothing it reads changed.
	// The recorded pods are the fleet memory's maps, changed in place: their version tells whether they moved.
	if memory.placed == nil || memory.placed.recorded != w.recordedVersion || !memory.placed.fleet.EqualBesidesRecorded(fleet) {
		version := uint64(1)
		if memory.placed != nil {
			version = memory.placed.version + 1
		}
		memory.placed = newPlacedFleet(fleet, w.recordedVersion, version)
	}
	placed := memory.placed
	plan.result, plan.held, plan.last = placed.plan.Result, placed.plan.Held, placed.plan.Last
	plan.onPod, plan.version = placed.onPod, placed.version
	return plan
}

// gracePeriod is how long an unready (or refusing) pod keeps its targets.
func gracePeriod(cluster *operatorv1alpha1.Cluster) time.Duration {
	if g := cluster.Spec.TargetDistribution.UnreadyGracePeriod; g != nil {
		return g.Duration
	}
	return 60 * time.Second
}

// podReadiness says whether a pod can hold targets and, when it cannot, since when. It reads the
// ContainersReady condition, not Ready: Ready includes the pod's readiness gate, which only turns True once
// the operator pushed the pod its configuration, and the operator pushes only to pods it considers ready.
// Pods without ContainersReady (as written by tests or other tooling) are judged by Ready.
func podReadiness(pod *corev1.Pod) (bool, time.Time) {
	cond := podCondition(pod, corev1.ContainersReady)
	if cond == nil {
		cond = podCondition(pod, corev1.PodReady)
	}
	switch {
	case cond == nil:
		return false, pod.CreationTimestamp.Time
	case cond.Status == corev1.ConditionTrue:
		return pod.Status.PodIP != "", time.Time{}
	default:
		return false, cond.LastTransitionTime.Time
	}
}

func podCondition(pod *corev1.Pod, kind corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == kind {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// placedFleet is the last placement of a Cluster's fleet and what it was computed from, with the targets it puts
// on each pod and its version: a placement made anew gets the next one.
type placedFleet struct {
	fleet    clusterplacement.Fleet
	recorded uint64
	plan     clusterplacement.Plan
	onPod    map[int][]string
	version  uint64
}

// newPlacedFleet places the fleet.
func newPlacedFleet(fleet clusterplacement.Fleet, recorded, version uint64) *placedFleet {
	p := &placedFleet{fleet: fleet, recorded: recorded, plan: clusterplacement.Place(fleet), onPod: map[int][]string{}, version: version}
	for name, o := range p.plan.Result.Assignments {
		p.onPod[o] = append(p.onPod[o], name)
	}
	for name, o := range p.plan.Held {
		p.onPod[o] = append(p.onPod[o], name)
	}
	for _, names := range p.onPod {
		slices.Sort(names) // as collectors' acknowledged and running names are: a pod at rest is told by comparing
	}
	return p
}
