package selection

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Resolve returns what the enabled Pipelines of the Cluster named cluster
// select among in, which holds the objects of the Cluster's namespace.
// Pipelines are applied in name order, which only matters for conflicting
// labels (the first pipeline wins). Resolve never fails: whatever cannot be
// selected is described in Selection.Problems.
//
// Resolve is Prepare, then Prepared.Target for every Target, then
// Prepared.Selection: a caller that remembers the picks of unchanged Targets
// gets the same Selection without redoing them (prepared.go).
func Resolve(cluster string, in Objects) Selection {
	p := Prepare(cluster, in)
	return p.Selection(freshPicks(p, in.Targets))
}

// freshPicks yields every Target of targets with its pick.
func freshPicks(p *Prepared, targets []v1alpha1.Target) iter.Seq2[*v1alpha1.Target, *TargetPick] {
	return func(yield func(*v1alpha1.Target, *TargetPick) bool) {
		var pick TargetPick // one for all: Selection keeps no pick
		for i := range targets {
			t := &targets[i]
			pick = p.Target(t)
			if !yield(t, &pick) {
				return
			}
		}
	}
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

// resolver works out everything a selection holds but its targets: the
// subscriptions, outputs, inputs and processors the pipelines select, and how
// each pipeline picks targets.
type resolver struct {
	subscriptions pool[v1alpha1.Subscription]
	outputs       pool[v1alpha1.Output]
	inputs        pool[v1alpha1.Input]
	processors    pool[v1alpha1.Processor]
	// outputChains and inputChains are the processors the pipelines add to each output and input, in chain
	// order (processors.go).
	outputChains map[string][]string
	inputChains  map[string][]string

	inputOutputs map[string]map[string]bool
	sel          Selection
	problems     map[string]bool
	pipelines    []targetChooser
}

func newResolver(in Objects) *resolver {
	return &resolver{
		subscriptions: newPool(KindSubscription, in.Subscriptions),
		outputs:       newPool(KindOutput, in.Outputs),
		inputs:        newPool(KindInput, in.Inputs),
		processors:    newPool(KindProcessor, in.Processors),
		outputChains:  make(map[string][]string),
		inputChains:   make(map[string][]string),
		inputOutputs:  make(map[string]map[string]bool),
		sel: Selection{
			Subscriptions: make(map[string]*v1alpha1.Subscription),
			Outputs:       make(map[string]*v1alpha1.Output),
			Inputs:        make(map[string]SelectedInput),
			Processors:    make(map[string]*v1alpha1.Processor),
		},
		problems: make(map[string]bool),
	}
}

func (r *resolver) add(p *v1alpha1.Pipeline) {
	r.sel.Pipelines = append(r.sel.Pipelines, p.Name)
	subs := r.pick(r.subscriptions.pick(p.Name, choiceOf(p, KindSubscription)))
	outs := r.pick(r.outputs.pick(p.Name, choiceOf(p, KindOutput)))
	ins := r.pick(r.inputs.pick(p.Name, choiceOf(p, KindInput)))
	chooser := r.pickTargets(p, subs, outs)
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
	r.pipelines = append(r.pipelines, chooser)
}

// pickTargets returns how p picks targets and applies subs and outs to them;
// its invalid target selectors are problems.
func (r *resolver) pickTargets(p *v1alpha1.Pipeline, subs, outs []string) targetChooser {
	c := choiceOf(p, KindTarget)
	chooser := targetChooser{name: p.Name, subscriptions: subs, outputs: outs, labels: p.Spec.Labels, labelKeys: sortedKeys(p.Spec.Labels)}
	if len(c.refs) > 0 {
		chooser.refs = make(map[string]bool, len(c.refs))
		for _, ref := range c.refs {
			chooser.refs[ref] = true
		}
	}
	selectors, problems := compileSelectors(p.Name, KindTarget.selectorField(), c.selectors)
	r.pick(nil, problems)
	chooser.selectors = selectors
	return chooser
}

// pick records the problems of a pool pick and returns its names.
func (r *resolver) pick(names, problems []string) []string {
	for _, p := range problems {
		r.problem(p)
	}
	return names
}

func (r *resolver) problem(p string) { r.problems[p] = true }

// finish completes the inputs, output chains and processors of the selection.
func (r *resolver) finish() {
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

// targetRefProblem is the problem of a targetRef to a Target that does not exist.
func targetRefProblem(pipeline, ref string) string {
	return fmt.Sprintf("pipeline %q: %s %q not found", pipeline, KindTarget.refField(), ref)
}
