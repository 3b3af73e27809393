package selection

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// KindProcessor is the kind of the event processors that Outputs, Inputs and Pipelines name.
const KindProcessor Kind = "Processor"

// Processor chains. An Output or Input applies event processors in one order, its chain:
//  1. its own spec.eventProcessors, in order;
//  2. then, for each enabled Pipeline of the Cluster that selects it, in the Pipelines' name order, that
//     Pipeline's processorRefs (spec.outputs for an Output, spec.inputs for an Input) in order, then the
//     Processors its processorSelectors match, sorted by name;
//  3. a Processor already in the chain is not added again: its first place counts.
//
// A chain keeps the names of Processors that do not exist: an object whose chain names one is not sent
// (package render), so nothing runs with half its chain. A Pipeline's processorRefs to a missing Processor is
// also one of the Pipeline's problems.

// processorChoice is how one Pipeline picks the processors of the Outputs (forInputs false) or the Inputs it
// selects.
func processorChoice(p *v1alpha1.Pipeline, forInputs bool) choice {
	if forInputs {
		if i := p.Spec.Inputs; i != nil {
			return choice{i.ProcessorRefs, i.ProcessorSelectors}
		}
		return choice{}
	}
	if o := p.Spec.Outputs; o != nil {
		return choice{o.ProcessorRefs, o.ProcessorSelectors}
	}
	return choice{}
}

// chain returns, in chain order, the processors pipeline picks with c: the references in their order (missing
// ones included), then the selectors' matches sorted by name. Problems name the missing references and the
// invalid selectors.
func (p pool[T]) chain(pipeline string, c choice, field string) (names []string, problems []string) {
	for _, ref := range c.refs {
		if _, ok := p.byName[ref]; !ok {
			problems = append(problems, fmt.Sprintf("pipeline %q: %s.processorRef %q not found", pipeline, field, ref))
		}
		names = append(names, ref)
	}
	var matched []string
	for i := range c.selectors {
		sel, err := metav1.LabelSelectorAsSelector(&c.selectors[i])
		if err != nil {
			problems = append(problems, fmt.Sprintf("pipeline %q: %s.processorSelectors[%d] is invalid: %v", pipeline, field, i, err))
			continue
		}
		for _, name := range p.names {
			if sel.Matches(p.labels[name]) {
				matched = append(matched, name)
			}
		}
	}
	slices.Sort(matched)
	return appendNew(names, matched...), problems
}

// appendNew appends to chain the names it does not hold yet, in order.
func appendNew(chain []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(chain, n) {
			chain = append(chain, n)
		}
	}
	return chain
}

// ProcessorChain returns the chain of an object whose own spec.eventProcessors is own and whose Pipelines add
// added (in Pipeline order): own first, then added, each name once, at its first place.
func ProcessorChain(own []string, added ...[]string) []string {
	chain := appendNew(nil, own...)
	for _, a := range added {
		chain = appendNew(chain, a...)
	}
	return chain
}

// ClustersUsingProcessor returns the sorted names of the Clusters whose collectors may apply the Processor
// called name with processorLabels: those whose enabled Pipelines pick it (processorRefs or
// processorSelectors), and those that select an Output or Input naming it in spec.eventProcessors. Outputs,
// inputs and pipelines are those of the Processor's namespace. It is meant for watch mappers and errs on the
// side of too many Clusters.
func ClustersUsingProcessor(name string, processorLabels map[string]string, outputs []v1alpha1.Output,
	inputs []v1alpha1.Input, pipelines []v1alpha1.Pipeline) []string {
	var clusters []string
	set := labels.Set(processorLabels)
	for i := range pipelines {
		p := &pipelines[i]
		if enabled(p) && (selects(processorChoice(p, false), name, set) || selects(processorChoice(p, true), name, set)) {
			clusters = append(clusters, p.Spec.ClusterRef)
		}
	}
	for i := range outputs {
		if o := &outputs[i]; slices.Contains(o.Spec.EventProcessors, name) {
			clusters = append(clusters, ClustersSelecting(KindOutput, o.Name, o.Labels, pipelines)...)
		}
	}
	for i := range inputs {
		if in := &inputs[i]; slices.Contains(in.Spec.EventProcessors, name) {
			clusters = append(clusters, ClustersSelecting(KindInput, in.Name, in.Labels, pipelines)...)
		}
	}
	slices.Sort(clusters)
	return slices.Compact(clusters)
}

// CombinedProcessors returns the names of the processors an event-combine Processor runs
// (spec.config.processors[].name): the collector looks them up among its processors, so they are sent with
// it. Other types, and entries that are not objects with a string name, name none.
func CombinedProcessors(p *v1alpha1.Processor) []string {
	if p.Spec.Type != "event-combine" {
		return nil
	}
	raw, ok := p.Spec.Config["processors"]
	if !ok {
		return nil
	}
	var steps []any
	if err := json.Unmarshal(raw.Raw, &steps); err != nil {
		return nil
	}
	var names []string
	for _, step := range steps {
		s, _ := step.(map[string]any)
		if name, ok := s["name"].(string); ok && name != "" {
			names = append(names, name)
		}
	}
	return names
}
