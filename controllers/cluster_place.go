package controllers

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/availability"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
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
// go through bounded-load rendezvous placement over the ready pods.
func (r *ClusterReconciler) place(cluster *operatorv1alpha1.Cluster, w *world) placementPlan {
	grace := 60 * time.Second
	if g := cluster.Spec.TargetDistribution.UnreadyGracePeriod; g != nil {
		grace = g.Duration
	}
	pods := make([]availability.Pod, 0, len(w.pods))
	for ordinal, pod := range w.pods {
		ready, since := podReadiness(pod)
		pods = append(pods, availability.Pod{Ordinal: ordinal, Ready: ready, UnreadySince: since})
	}
	avail := availability.Classify(availability.Input{
		Replicas: int(workload.Replicas(cluster)), Pods: pods, Grace: grace, Now: r.now(),
	})
	holding := map[int]bool{}
	for _, o := range avail.Holding {
		holding[o] = true
	}

	plan := placementPlan{availability: avail, held: map[string]int{}, onPod: map[int][]string{}}
	in := placement.Input{Pods: avail.Ready, Current: map[string]int{}}
	if c := cluster.Spec.TargetDistribution.PodCapacity; c != nil {
		in.PodCapacity = int(*c)
	}
	for _, name := range w.selection.TargetNames() {
		if o, ok := w.current[name]; ok && holding[o] {
			plan.held[name] = o
			continue
		}
		in.Targets = append(in.Targets, placement.Target{Name: name})
		if o, ok := w.current[name]; ok {
			in.Current[name] = o
		}
	}
	plan.result = placement.Place(in)
	for name, o := range plan.result.Assignments {
		plan.onPod[o] = append(plan.onPod[o], name)
	}
	for name, o := range plan.held {
		plan.onPod[o] = append(plan.onPod[o], name)
	}
	return plan
}

// podReadiness reads the pod's Ready condition and, when it is not ready, since when.
func podReadiness(pod *corev1.Pod) (bool, time.Time) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				return pod.Status.PodIP != "", time.Time{}
			}
			return false, c.LastTransitionTime.Time
		}
	}
	return false, pod.CreationTimestamp.Time
}
