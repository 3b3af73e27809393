package balancer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// balancerStatus computes a Balancer's status from one look: its targets as observed (and written), the
// plan. Conditions keep their transition times from the status before.
func balancerStatus(b *operatorv1alpha1.Balancer, targets []observedTarget, plan balancerPlan) operatorv1alpha1.BalancerStatus {
	st := operatorv1alpha1.BalancerStatus{ObservedGeneration: b.Generation}
	for _, c := range b.Status.Conditions {
		st.Conditions = append(st.Conditions, *c.DeepCopy())
	}
	selector, selectorErr := statusSelector(b.Spec.Selector, targets)
	st.Selector = selector
	for i := range targets {
		t := &targets[i]
		ts := targetStatus(t, plan)
		st.Replicas += ts.Current
		st.ReadyReplicas += ts.Ready
		st.Targets = append(st.Targets, ts)
	}
	gen := b.Generation
	meta.SetStatusCondition(&st.Conditions, balancedCondition(b, targets, plan, selectorErr))
	meta.SetStatusCondition(&st.Conditions, replicasPlacedCondition(targets, plan, gen))
	meta.SetStatusCondition(&st.Conditions, fallbackCondition(b, plan))
	return st
}

// targetStatus is one target's line in status.targets.
func targetStatus(t *observedTarget, plan balancerPlan) operatorv1alpha1.BalancerTargetStatus {
	ts := operatorv1alpha1.BalancerTargetStatus{Name: t.spec.Name}
	if t.balanced() {
		ts.Current, ts.Ready, ts.NotStarted = t.pods.current, t.pods.ready, t.pods.notStarted
		if t.pods.notStarted > 0 {
			ts.NotStartedSince = &metav1.Time{Time: t.pods.notStartedSince}
		}
		if a, ok := plan.allocations[t.spec.Name]; ok && plan.err == nil {
			ts.Desired = ptr.To(int32(a.Desired))
			ts.Replacements = int32(a.Replacements)
			ts.Blocked = a.Blocked
			ts.Reasons = slices.Clone(a.Reasons)
		}
		if t.pods.selectorMissing {
			ts.Reasons = append(ts.Reasons, "its scale subresource reports no pod selector: its pods are not counted")
		}
		if t.pods.unselected > 0 {
			ts.Reasons = append(ts.Reasons, fmt.Sprintf("%d pod(s) not matched by spec.selector: an autoscaler of the "+
				"Balancer does not see them", t.pods.unselected))
		}
	}
	if t.problem != nil {
		ts.Reasons = append(ts.Reasons, t.problem.message)
	}
	return ts
}

// balancedCondition says whether every target holds what the policy gives it, and otherwise which targets
// the Balancer leaves alone or could not write, and why. The first such target's reason is the condition's.
func balancedCondition(b *operatorv1alpha1.Balancer, targets []observedTarget, plan balancerPlan, selectorErr error) metav1.Condition {
	c := metav1.Condition{Type: operatorv1alpha1.ConditionBalanced, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonBalanced, ObservedGeneration: b.Generation,
		Message: fmt.Sprintf("every target holds what the %s policy gives it", b.Spec.Policy.PolicyName)}
	var problems []string
	for i := range targets {
		if p := targets[i].problem; p != nil {
			if len(problems) == 0 {
				c.Reason = p.reason
			}
			problems = append(problems, targets[i].spec.Name+": "+p.message)
		}
	}
	switch {
	case len(problems) > 0:
		c.Status, c.Message = metav1.ConditionFalse, strings.Join(problems, "; ")
		if plan.err != nil {
			c.Message += "; " + plan.err.Error()
		}
	case plan.err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, operatorv1alpha1.ReasonCannotBalance, plan.err.Error()
	case selectorErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonInvalidSelector
		c.Message = fmt.Sprintf("spec.selector: %v: status.selector is empty, an autoscaler of the Balancer cannot act", selectorErr)
	}
	return c
}

// replicasPlacedCondition says whether the targets run exactly spec.replicas (plus replacements), or why not.
func replicasPlacedCondition(targets []observedTarget, plan balancerPlan, generation int64) metav1.Condition {
	r := plan.result
	c := metav1.Condition{Type: operatorv1alpha1.ConditionReplicasPlaced, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonAllPlaced, ObservedGeneration: generation,
		Message: fmt.Sprintf("%d replica(s) placed", plan.replicas)}
	if r.Missing > 0 {
		c.Message += fmt.Sprintf(", and %d replacement(s) for replicas not started", r.Missing)
	}
	taking := slices.ContainsFunc(targets, func(t observedTarget) bool { return t.balanced() })
	switch {
	case plan.err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, operatorv1alpha1.ReasonCannotBalance, plan.err.Error()
	case !taking:
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonCannotBalance
		c.Message = "no target can be balanced: the Balanced condition says why"
	case r.Excess > 0:
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonMinReplicasExceedReplicas
		c.Message = fmt.Sprintf("the targets' minReplicas add up to more than spec.replicas (%d): the targets run %d, "+
			"each its minimum", plan.replicas, r.Placed)
	case r.Unplaced > 0:
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonMaxReplicasReached
		c.Message = fmt.Sprintf("%d of %d replica(s) find no room: every target the policy may grow is at its "+
			"maxReplicas, and blocked targets take no replacements", r.Unplaced, plan.replicas+r.Missing)
	}
	return c
}

// fallbackCondition says whether replacements run for replicas that did not start, for which targets and
// where.
func fallbackCondition(b *operatorv1alpha1.Balancer, plan balancerPlan) metav1.Condition {
	c := metav1.Condition{Type: operatorv1alpha1.ConditionFallbackActive, Status: metav1.ConditionFalse,
		Reason: operatorv1alpha1.ReasonFallbackOff, ObservedGeneration: b.Generation,
		Message: "policy.fallback is not set: replicas that do not start are waited for"}
	f := b.Spec.Policy.Fallback
	if f == nil {
		return c
	}
	c.Reason = operatorv1alpha1.ReasonAllStarted
	c.Message = fmt.Sprintf("no target's pods waited longer than %s to start", f.StartupTimeout.Duration)
	var blocked, replacements []string
	for _, a := range plan.result.Targets {
		if a.Blocked {
			blocked = append(blocked, fmt.Sprintf("%s (%d not started)", a.Name, a.Missing))
		}
		if a.Replacements > 0 {
			replacements = append(replacements, fmt.Sprintf("%s %d", a.Name, a.Replacements))
		}
	}
	if len(blocked) > 0 && plan.err == nil {
		c.Status, c.Reason = metav1.ConditionTrue, operatorv1alpha1.ReasonStartupTimeout
		c.Message = fmt.Sprintf("pods have not started within %s in %s", f.StartupTimeout.Duration, strings.Join(blocked, ", "))
		if len(replacements) > 0 {
			c.Message += "; replacements run in " + strings.Join(replacements, ", ")
		}
		if plan.result.Unplaced > 0 {
			c.Message += fmt.Sprintf("; %d find no room", plan.result.Unplaced)
		}
	}
	return c
}

// reportStatus writes the Balancer's status when it changed, and raises the events its changes deserve.
func (r *Reconciler) reportStatus(ctx context.Context, b *operatorv1alpha1.Balancer, st operatorv1alpha1.BalancerStatus) error {
	base := b.DeepCopy()
	r.emitBalancerEvents(b, b.Status, st)
	b.Status = st
	if equality.Semantic.DeepEqual(base.Status, b.Status) {
		return nil
	}
	if err := r.Status().Patch(ctx, b, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write balancer status: %w", err)
	}
	return nil
}
