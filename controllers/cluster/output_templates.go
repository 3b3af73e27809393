package cluster

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/rejection"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// setTemplatesSupported sets the TemplatesSupported condition of an Output the Cluster selects whose
// spec.config has a template (gnmic.TemplateKeys): False while one calls functions gNMIc 0.46.0 removed with
// gomplate or does not parse, True otherwise. An Output without templates, and every Input, carries no such
// condition. It returns the condition's message when it turned False or changed its message while False, for
// the Output's GomplateRemoved event, and "" otherwise.
func setTemplatesSupported(a acceptance, w *world) (eventMessage string) {
	if a.kind != rejection.KindOutput {
		return ""
	}
	templates := templatesOf(a.config)
	if len(templates) == 0 {
		meta.RemoveStatusCondition(a.conditions, operatorv1alpha1.ConditionTemplatesSupported)
		return ""
	}
	if !w.selects(selection.Kind(a.kind), a.name) {
		return ""
	}
	cond := judgeTemplates(templates)
	cond.ObservedGeneration = a.generation
	old := meta.FindStatusCondition(*a.conditions, cond.Type)
	if cond.Status == metav1.ConditionFalse && (old == nil || old.Status != metav1.ConditionFalse || old.Message != cond.Message) {
		eventMessage = cond.Message
	}
	meta.SetStatusCondition(a.conditions, cond)
	*a.observedGeneration = a.generation
	return eventMessage
}

// configTemplate is one template of an Output's config: its key, and its text or why it is not one.
type configTemplate struct {
	key, text string
	notString bool
}

// templatesOf are the templates of an Output's spec.config, in gnmic.TemplateKeys order.
func templatesOf(config map[string]apiextensionsv1.JSON) []configTemplate {
	var templates []configTemplate
	for _, key := range gnmic.TemplateKeys {
		raw, ok := config[key]
		if !ok {
			continue
		}
		t := configTemplate{key: key}
		if err := json.Unmarshal(raw.Raw, &t.text); err != nil {
			t.notString = true
		}
		templates = append(templates, t)
	}
	return templates
}

// judgeTemplates is the TemplatesSupported condition of an Output with these templates.
func judgeTemplates(templates []configTemplate) metav1.Condition {
	cond := metav1.Condition{Type: operatorv1alpha1.ConditionTemplatesSupported, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonTemplatesSupported}
	var removed, invalid, fine []string
	for _, t := range templates {
		if t.notString {
			invalid = append(invalid, fmt.Sprintf("spec.config.%s is not a string", t.key))
			continue
		}
		undefined, err := gnmic.UndefinedTemplateFunctions(t.text)
		if len(undefined) > 0 {
			removed = append(removed, fmt.Sprintf("spec.config.%s calls %s", t.key, strings.Join(undefined, ", ")))
		}
		switch {
		case err != nil:
			invalid = append(invalid, fmt.Sprintf("spec.config.%s does not parse: %v", t.key, err))
		case len(undefined) == 0:
			fine = append(fine, "spec.config."+t.key)
		}
	}
	switch {
	case len(removed) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonGomplateRemoved
		cond.Message = fmt.Sprintf("%s: gNMIc %s removed gomplate, so collectors of %s or newer refuse these "+
			"templates; they define text/template's builtins and %s only (docs/outputs.md)",
			strings.Join(removed, "; "), gnmic.GomplateRemovedIn, gnmic.GomplateRemovedIn, strings.Join(gnmic.TemplateFunctions, ", "))
		if len(invalid) > 0 {
			cond.Message += "; " + strings.Join(invalid, "; ")
		}
	case len(invalid) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonInvalidTemplate
		cond.Message = strings.Join(invalid, "; ") + ": no gNMIc release takes it"
	default:
		cond.Message = fmt.Sprintf("%s parse with the functions of gNMIc %s and newer", strings.Join(fine, " and "),
			gnmic.GomplateRemovedIn)
	}
	cond.Message = truncate(cond.Message, maxConditionMessage)
	return cond
}
