package balancer

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// scaleWrites is what writing the targets' scales did.
type scaleWrites struct {
	// changed says at least one scale was written.
	changed bool
	// conflict says a scale changed between its read and its write: the Balancer looks again at once.
	conflict bool
}

// scaleTargets writes the plan's count to every target whose scale holds another, and only to those. A write
// that fails becomes the target's problem; a conflict is left for the next look.
func (r *Reconciler) scaleTargets(ctx context.Context, b *operatorv1alpha1.Balancer, targets []observedTarget,
	plan balancerPlan) scaleWrites {
	var w scaleWrites
	if plan.err != nil {
		return w
	}
	for i := range targets {
		t := &targets[i]
		a, ok := plan.allocations[t.spec.Name]
		if !t.balanced() || !ok || t.scale.Spec.Replicas == int32(a.Desired) {
			continue
		}
		ref := t.spec.ScaleTargetRef
		what := fmt.Sprintf("%s %q", ref.Kind, ref.Name)
		s := t.scale.DeepCopy()
		from := s.Spec.Replicas
		s.Spec.Replicas = int32(a.Desired)
		updated, err := r.Scales.Scales(b.Namespace).Update(ctx, t.resource, s, metav1.UpdateOptions{})
		switch {
		case err == nil:
			t.scale, w.changed = updated, true
			why := ""
			if len(a.Reasons) > 0 {
				why = ": " + strings.Join(a.Reasons, "; ")
			}
			r.Recorder.Eventf(b, corev1.EventTypeNormal, operatorv1alpha1.EventBalancerScaled, "%s: %s scaled from %d to %d%s",
				t.spec.Name, what, from, a.Desired, why)
		case apierrors.IsConflict(err):
			w.conflict = true
		case apierrors.IsForbidden(err):
			t.problem = &targetProblem{operatorv1alpha1.ReasonScaleForbidden, forbiddenScale(what, t.resource, "update")}
		default:
			t.problem = &targetProblem{operatorv1alpha1.ReasonScaleFailed, fmt.Sprintf("%s: write scale: %v", what, err)}
		}
	}
	return w
}
