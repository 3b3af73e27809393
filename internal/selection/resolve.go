package selection

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Resolve returns what the enabled Pipelines of the Cluster named cluster
// select among in, which holds the objects of the Cluster's namespace.
// Pipelines are applied in name order, which only matters for conflicting
// labels (the first pipeline wins). Resolve never fails: whatever cannot be
// selected is described in Selection.Problems.
func Resolve(cluster string, in Objects) Selection {
	r := resolver{
		targets:       newPool(KindTarget, in.Targets),
		subscriptions: newPool(KindSubscription, in.Subscriptions),
		outputs:       newPool(KindOutput, in.Outputs),
		inputs:        newPool(KindInput, in.Inputs),
		processors:    newPool(KindProcessor, in.Processors),
		outputChains:  make(map[string][]string),
		inputChains:   make(map[string][]string),
		picked:        make(map[string]*targetPick),
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

// pipelinesOf returns the enabled pipelines of cluster, sorted by name.
func pipelinesOf(cluster string, pipelines []v1alpha1.Pipeline) []*v1alpha1.Pipeline {
	var out []*v1alpha1.Pipeline
	for i := range pipelines {
		if p := &pipelines[i]; p.Spec.ClusterRef == cluster && enabled(p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *v1alpha1.Pipeline) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type resolver struct {
	targets       pool[v1alpha1.Target]
	subscriptions pool[v1alpha1.Subscription]
	outputs       pool[v1alpha1.Output]
	inputs        pool[v1alpha1.Input]
	processors    pool[v1alpha1.Processor]
	// outputChains and inputChains are the processors the pipelines add to each output and input, in chain
	// order (processors.go).
	outputChains map[string][]string
	inputChains  map[string][]string

	picked       map[string]*targetPick
	inputOutputs map[string]map[string]bool
	sel          Selection
	problems     map[string]bool
}

// targetPick accumulates what the pipelines selecting one target apply to it.
type targetPick struct {
	subscriptions map[string]bool
	outputs       map[string]bool
	labels        map[string]string
	labelSetBy    map[string]string // label key → pipeline that set it
}

func (r *resolver) add(p *v1alpha1.Pipeline) {
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

func (r *resolver) addTarget(name string, p *v1alpha1.Pipeline, subs, outs []string) {
	t := r.picked[name]
	if t == nil {
		t = &targetPick{labels: map[string]string{}, labelSetBy: map[string]string{}}
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
func (r *resolver) pick(names, problems []string) []string {
	for _, p := range problems {
		r.problem(p)
	}
	return names
}

func (r *resolver) problem(p string) { r.problems[p] = true }

func (r *resolver) result() Selection {
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
func (r *resolver) chainOf(own, added []string) []string {
	chain := ProcessorChain(own, added)
	r.addProcessors(chain)
	return chain
}

// addProcessors adds the named Processors that exist to the selection, with the processors an event-combine
// among them runs, and theirs.
func (r *resolver) addProcessors(names []string) {
	for _, name := range names {
		p, ok := r.processors.byName[name]
		if !ok || r.sel.Processors[name] != nil {
			continue
		}
		r.sel.Processors[name] = p
		r.addProcessors(CombinedProcessors(p))
	}
}

func addAll(set map[string]bool, names []string) map[string]bool {
	if set == nil {
		set = make(map[string]bool, len(names))
	}
	for _, n := range names {
		set[n] = true
	}
	return set
}

// sortedSet returns the members of set in order, nil when it is empty.
func sortedSet(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	return sortedKeys(set)
}
