package balancer

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// emitBalancerEvents raises an event for each change a user wants to see in `kubectl describe`: a target
// blocked or unblocked, the Balancer no longer or again balanced, replicas that cannot be placed. The scale
// writes raise their own (scaleTargets).
func (r *Reconciler) emitBalancerEvents(b *operatorv1alpha1.Balancer, before, after operatorv1alpha1.BalancerStatus) {
	wasBlocked := map[string]bool{}
	for _, t := range before.Targets {
		wasBlocked[t.Name] = t.Blocked
	}
	timeout := time.Duration(0)
	if f := b.Spec.Policy.Fallback; f != nil {
		timeout = f.StartupTimeout.Duration
	}
	for _, t := range after.Targets {
		switch {
		case t.Blocked && !wasBlocked[t.Name]:
			r.Recorder.Eventf(b, corev1.EventTypeWarning, operatorv1alpha1.EventFallbackStarted, "%s: %d pod(s) have not started within %s: "+
				"its replicas that have not started are replaced in the other targets", t.Name, t.NotStarted, timeout)
		case !t.Blocked && wasBlocked[t.Name]:
			r.Recorder.Eventf(b, corev1.EventTypeNormal, operatorv1alpha1.EventFallbackEnded, "%s: its pods started: the replacements go", t.Name)
		}
	}
	if c, changed := conditionChanged(before.Conditions, after.Conditions, operatorv1alpha1.ConditionBalanced); changed {
		switch {
		case c.Status == metav1.ConditionFalse:
			r.Recorder.Eventf(b, corev1.EventTypeWarning, operatorv1alpha1.EventNotBalanced, "%s: %s", c.Reason, c.Message)
		case meta.FindStatusCondition(before.Conditions, c.Type) != nil:
			r.Recorder.Event(b, corev1.EventTypeNormal, operatorv1alpha1.EventBalanced, c.Message)
		}
	}
	if c, changed := conditionChanged(before.Conditions, after.Conditions, operatorv1alpha1.ConditionReplicasPlaced); changed &&
		c.Status == metav1.ConditionFalse && c.Reason != operatorv1alpha1.ReasonCannotBalance {
		r.Recorder.Eventf(b, corev1.EventTypeWarning, operatorv1alpha1.EventReplicasNotPlaced, "%s: %s", c.Reason, c.Message)
	}
}

// conditionChanged is the condition of the type after, and whether its status, reason or message differ
// from before (or it is new).
func conditionChanged(before, after []metav1.Condition, conditionType string) (metav1.Condition, bool) {
	a := meta.FindStatusCondition(after, conditionType)
	if a == nil {
		return metav1.Condition{}, false
	}
	b := meta.FindStatusCondition(before, conditionType)
	return *a, b == nil || b.Status != a.Status || b.Reason != a.Reason || b.Message != a.Message
}
