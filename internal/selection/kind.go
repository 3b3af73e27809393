package selection

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Kind is a kind of object a Pipeline selects.
type Kind string

// The kinds a Pipeline selects.
const (
	KindTarget       Kind = "Target"
	KindSubscription Kind = "Subscription"
	KindOutput       Kind = "Output"
	KindInput        Kind = "Input"
)

// choice is how one Pipeline selects objects of one kind.
type choice struct {
	refs      []string
	selectors []metav1.LabelSelector
}

// choiceOf returns the references and selectors p has for kind. An unknown
// kind selects nothing.
func choiceOf(p *v1alpha1.Pipeline, kind Kind) choice {
	switch kind {
	case KindTarget:
		return choice{p.Spec.TargetRefs, p.Spec.TargetSelectors}
	case KindSubscription:
		return choice{p.Spec.SubscriptionRefs, p.Spec.SubscriptionSelectors}
	case KindOutput:
		if o := p.Spec.Outputs; o != nil {
			return choice{o.OutputRefs, o.OutputSelectors}
		}
	case KindInput:
		if i := p.Spec.Inputs; i != nil {
			return choice{i.InputRefs, i.InputSelectors}
		}
	}
	return choice{}
}

// refField and selectorField name the Pipeline fields of kind in problems,
// for example targetRef and targetSelectors.
func (k Kind) refField() string      { return k.field() + "Ref" }
func (k Kind) selectorField() string { return k.field() + "Selectors" }

func (k Kind) field() string {
	switch k {
	case KindTarget:
		return "target"
	case KindSubscription:
		return "subscription"
	case KindOutput:
		return "output"
	case KindInput:
		return "input"
	case KindProcessor:
		return "processor"
	}
	return string(k)
}

// enabled reports whether p contributes to its Cluster. Enabled defaults to
// true in the CRD; a nil value (an object written before the default existed)
// counts as true too.
func enabled(p *v1alpha1.Pipeline) bool {
	return p.Spec.Enabled == nil || *p.Spec.Enabled
}
