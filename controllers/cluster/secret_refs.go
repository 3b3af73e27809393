package cluster

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// setSecretsResolved sets the SecretsResolved condition of an Output or Input with spec.secretRefs that the
// Cluster selects: False while a Secret or key it names is missing, or a key cannot be set inside spec.config
// (the object is then sent to no collector), True otherwise. An object without secretRefs carries no such
// condition. Every Cluster that selects the object reads the same Secrets of the same namespace, so they agree.
func setSecretsResolved(a acceptance, w *world) {
	if len(a.secretRefs) == 0 {
		meta.RemoveStatusCondition(a.conditions, operatorv1alpha1.ConditionSecretsResolved)
		return
	}
	kind := selection.Kind(a.kind)
	if !w.selects(kind, a.name) {
		return
	}
	cond := metav1.Condition{Type: operatorv1alpha1.ConditionSecretsResolved, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonSecretsResolved, Message: fmt.Sprintf("every value of spec.secretRefs is set (%d)", len(a.secretRefs)),
		ObservedGeneration: a.generation}
	problem := render.CheckSecretRefs(a.secretRefs, w.conn.Secrets)
	if skip, skipped := w.skipOf(kind, a.name); problem == nil && skipped && errors.Is(skip, render.ErrNotAnObject) {
		problem = skip.Err
	}
	switch {
	case problem == nil:
	case errors.Is(problem, render.ErrSecretNotFound):
		cond.Reason = operatorv1alpha1.ReasonSecretNotFound
	case errors.Is(problem, render.ErrSecretKeyMissing):
		cond.Reason = operatorv1alpha1.ReasonSecretKeyMissing
	default:
		cond.Reason = operatorv1alpha1.ReasonInvalidSecretRef
	}
	if problem != nil {
		cond.Status = metav1.ConditionFalse
		cond.Message = truncate("sent to no collector: "+problem.Error(), maxConditionMessage)
	}
	meta.SetStatusCondition(a.conditions, cond)
	*a.observedGeneration = a.generation
}

// selects tells whether the Cluster selects the named Output or Input.
func (w *world) selects(kind selection.Kind, name string) bool {
	switch kind {
	case selection.KindOutput:
		_, ok := w.selection.Outputs[name]
		return ok
	case selection.KindInput:
		_, ok := w.selection.Inputs[name]
		return ok
	}
	return false
}

// skipOf is why the named object was left out of the configuration, if it was.
func (w *world) skipOf(kind selection.Kind, name string) (render.SkipError, bool) {
	for _, s := range w.skips {
		if s.Kind == kind && s.Name == name {
			return s, true
		}
	}
	return render.SkipError{}, false
}
