package balancer

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// podCount is what a target's pods are doing, as the balance core counts them.
//
// A pod counts when it exists, is not terminating and has not finished (Succeeded or Failed). It has started
// when its Ready condition is True. Every other pod that counts has not started: waiting to be scheduled
// (unschedulable in a lost zone or a spot pool without capacity), pulling its image, starting, or no longer
// ready. It waits since its creation or, when it was ready once, since it stopped being ready (its Ready
// condition's last transition): a pod that ran for a day and fails now is not blocked at once.
type podCount struct {
	// current counts the pods that count, ready the started ones, notStarted the others.
	current, ready, notStarted int32
	// notStartedSince is when the longest-waiting not-started pod began to wait; zero without one.
	notStartedSince time.Time
	// unselected counts the pods that the Balancer's spec.selector does not match: an autoscaler of the
	// Balancer does not see them.
	unselected int32
	// selectorMissing says the target's scale reports no pod selector, so its pods cannot be counted.
	selectorMissing bool
}

// countPods counts pods as podCount says. balancerSelector, when not nil, is the Balancer's spec.selector.
func countPods(pods []corev1.Pod, balancerSelector labels.Selector) podCount {
	var c podCount
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		c.current++
		if balancerSelector != nil && !balancerSelector.Matches(labels.Set(p.Labels)) {
			c.unselected++
		}
		if podReady(p) {
			c.ready++
			continue
		}
		c.notStarted++
		if since := waitingSince(p); c.notStartedSince.IsZero() || since.Before(c.notStartedSince) {
			c.notStartedSince = since
		}
	}
	return c
}

// podReady tells whether the pod's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitingSince is when a pod that is not ready began to wait: the later of its creation and the last
// transition of its Ready condition.
func waitingSince(p *corev1.Pod) time.Time {
	since := p.CreationTimestamp.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	return since
}

// waiting is how long the longest-waiting not-started pod has waited at now; 0 without one.
func (c podCount) waiting(now time.Time) time.Duration {
	if c.notStarted == 0 || c.notStartedSince.IsZero() {
		return 0
	}
	return max(now.Sub(c.notStartedSince), 0)
}
