package selection

import (
	"fmt"
	"maps"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// referenceResolve is Resolve as it was before it was split into Prepare,
// Prepared.Target and Prepared.Selection (commit 9b3039f): the oracle that
// proves the split changed nothing.
func referenceResolve(cluster string, in Objects) Selection {
	r := referenceResolver{
		targets:       newPool(KindTarget, in.Targets),
		subscriptions: newPool(KindSubscription, in.Subscriptions),
		outputs:       newPool(KindOutput, in.Outputs),
		inputs:        newPool(KindInput, in.Inputs),
		processors:    newPool(KindProcessor, in.Processors),
		outputChains:  make(map[string][]string),
		inputChains:   make(map[string][]string),
		picked:        make(map[string]*referenceTargetPick),
		inputOutputs:  make(map[string]map[string]bool),
		sel: Selection{
			Subscriptions: make(map[string]*v1alpha1.Subscription),
			Outputs:       make(map[string]*v1alpha1.Output),
			Inputs:        make(map[string]SelectedInput),
			Processors:    make(map[string]*v1alpha1.Processor),
		},
		problems: make(map[string]bool),
	}
	for _, p := range pipelinesOf(cluster, in.Pipelines) {
		r.add(p)
	}
	return r.result()
}

type referenceResolver struct {
	targets       pool[v1alpha1.Target]
	subscriptions pool[v1alpha1.Subscription]
	outputs       pool[v1alpha1.Output]
	inputs        pool[v1alpha1.Input]
	processors    pool[v1alpha1.Processor]
	// outputChains and inputChains are the processors the pipelines add to each output and input, in chain
	// order (processors.go).
	outputChains map[string][]string
	inputChains  map[string][]string

	picked       map[string]*referenceTargetPick
	inputOutputs map[string]map[string]bool
	sel          Selection
	problems     map[string]bool
}

// referenceTargetPick accumulates what the pipelines selecting one target apply to it.
type referenceTargetPick struct {
	subscriptions map[string]bool
	outputs       map[string]bool
	labels        map[string]string
	labelSetBy    map[string]string // label key → pipeline that set it
}

func (r *referenceResolver) add(p *v1alpha1.Pipeline) {
	r.sel.Pipelines = append(r.sel.Pipelines, p.Name)
	subs := r.pick(r.subscriptions.pick(p.Name, choiceOf(p, KindSubscription)))
	outs := r.pick(r.outputs.pick(p.Name, choiceOf(p, KindOutput)))
	ins := r.pick(r.inputs.pick(p.Name, choiceOf(p, KindInput)))
	targets := r.pick(r.targets.pick(p.Name, choiceOf(p, KindTarget)))
	outChain := r.pick(r.processors.chain(p.Name, processorChoice(p, false), "outputs"))
	inChain := r.pick(r.processors.chain(p.Name, processorChoice(p, true), "inputs"))

	for _, name := range subs {
		r.sel.Subscriptions[name] = r.subscriptions.byName[name]
	}
	for _, name := range outs {
		r.sel.Outputs[name] = r.outputs.byName[name]
		r.outputChains[name] = appendNew(r.outputChains[name], outChain...)
	}
	for _, name := range ins {
		r.sel.Inputs[name] = SelectedInput{Input: r.inputs.byName[name]}
		r.inputOutputs[name] = addAll(r.inputOutputs[name], outs)
		r.inputChains[name] = appendNew(r.inputChains[name], inChain...)
	}
	if len(targets) > 0 && len(subs) == 0 {
		r.problem(fmt.Sprintf("pipeline %q: selects targets but no subscription; a collector rejects a target without subscriptions, so this pipeline's targets are skipped", p.Name))
		return
	}
	for _, name := range targets {
		r.addTarget(name, p, subs, outs)
	}
}

func (r *referenceResolver) addTarget(name string, p *v1alpha1.Pipeline, subs, outs []string) {
	t := r.picked[name]
	if t == nil {
		t = &referenceTargetPick{labels: map[string]string{}, labelSetBy: map[string]string{}}
		r.picked[name] = t
	}
	t.subscriptions = addAll(t.subscriptions, subs)
	t.outputs = addAll(t.outputs, outs)
	for _, key := range sortedKeys(p.Spec.Labels) {
		value := p.Spec.Labels[key]
		first, set := t.labelSetBy[key]
		if !set {
			t.labels[key], t.labelSetBy[key] = value, p.Name
			continue
		}
		if t.labels[key] != value {
			r.problem(fmt.Sprintf("pipelines %q and %q select the same targets and set label %q differently; %q wins", first, p.Name, key, first))
		}
	}
}

// pick records the problems of a pool pick and returns its names.
func (r *referenceResolver) pick(names, problems []string) []string {
	for _, p := range problems {
		r.problem(p)
	}
	return names
}

func (r *referenceResolver) problem(p string) { r.problems[p] = true }

func (r *referenceResolver) result() Selection {
	for _, name := range sortedKeys(r.picked) {
		t := r.picked[name]
		st := SelectedTarget{
			Target:        r.targets.byName[name],
			Subscriptions: sortedSet(t.subscriptions),
			Outputs:       sortedSet(t.outputs),
		}
		if len(t.labels) > 0 {
			st.Labels = maps.Clone(t.labels)
		}
		r.sel.Targets = append(r.sel.Targets, st)
	}
	for name, in := range r.sel.Inputs {
		in.Outputs = sortedSet(r.inputOutputs[name])
		in.Processors = r.chainOf(in.Input.Spec.EventProcessors, r.inputChains[name])
		r.sel.Inputs[name] = in
	}
	for name, o := range r.sel.Outputs {
		if chain := r.chainOf(o.Spec.EventProcessors, r.outputChains[name]); chain != nil {
			if r.sel.OutputProcessors == nil {
				r.sel.OutputProcessors = make(map[string][]string)
			}
			r.sel.OutputProcessors[name] = chain
		}
	}
	r.sel.Problems = sortedSet(r.problems)
	return r.sel
}

// chainOf is the processor chain of an object whose own list is own and whose pipelines add added; the
// Processors it names that exist join the selection.
func (r *referenceResolver) chainOf(own, added []string) []string {
	chain := ProcessorChain(own, added)
	r.addProcessors(chain)
	return chain
}

// addProcessors adds the named Processors that exist to the selection, with the processors an event-combine
// among them runs, and theirs.
func (r *referenceResolver) addProcessors(names []string) {
	for _, name := range names {
		p, ok := r.processors.byName[name]
		if !ok || r.sel.Processors[name] != nil {
			continue
		}
		r.sel.Processors[name] = p
		r.addProcessors(CombinedProcessors(p))
	}
}
