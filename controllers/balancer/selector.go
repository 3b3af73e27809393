package balancer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// specSelector is the Balancer's spec.selector as a labels.Selector; nil when it is not set.
func specSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return nil, nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// statusSelector is the Balancer's status.selector, what its scale subresource serves an autoscaler: the
// union of the targets' pods is what it should select, which a label selector cannot express in general
// (zone=a or zone=b). So it is spec.selector when set, which the user writes to select exactly those pods;
// otherwise the requirements that every balanced target's scale selector has (app=collector of app=collector,
// zone=a and app=collector,zone=b): a superset of the union, which may select other pods too.
func statusSelector(spec *metav1.LabelSelector, targets []observedTarget) (string, error) {
	if spec != nil {
		sel, err := specSelector(spec)
		if err != nil {
			return "", err
		}
		return sel.String(), nil
	}
	var selectors []string
	for i := range targets {
		if targets[i].balanced() {
			selectors = append(selectors, targets[i].scale.Status.Selector)
		}
	}
	return commonRequirements(selectors), nil
}

// commonRequirements is the selector of the requirements every selector has, "" when they share none, when
// there is none or when one does not parse (an empty selector would select every pod of the namespace).
func commonRequirements(selectors []string) string {
	var common labels.Requirements
	for i, s := range selectors {
		sel, err := labels.Parse(s)
		if err != nil || s == "" {
			return ""
		}
		reqs, _ := sel.Requirements()
		if i == 0 {
			common = reqs
			continue
		}
		has := map[string]bool{}
		for _, r := range reqs {
			has[r.String()] = true
		}
		kept := common[:0]
		for _, r := range common {
			if has[r.String()] {
				kept = append(kept, r)
			}
		}
		common = kept
	}
	if len(common) == 0 {
		return ""
	}
	return labels.NewSelector().Add(common...).String()
}
