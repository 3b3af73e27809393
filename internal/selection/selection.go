package selection

import (
	"sort"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Objects are the objects of one namespace (the Cluster's) that Pipelines can
// select, as a reconciler lists them. Names are unique per kind, as they are
// in a namespace.
type Objects struct {
	Pipelines     []v1alpha1.Pipeline
	Targets       []v1alpha1.Target
	Subscriptions []v1alpha1.Subscription
	Outputs       []v1alpha1.Output
	Inputs        []v1alpha1.Input
	Processors    []v1alpha1.Processor
}

// Selection is what the enabled Pipelines of one Cluster select. Its pointers
// point into the Objects it was resolved from; nothing is copied.
type Selection struct {
	// Pipelines are the names of the enabled Pipelines of the Cluster, sorted.
	Pipelines []string
	// Targets are the selected targets, sorted by name.
	Targets []SelectedTarget
	// Subscriptions, Outputs and Inputs are keyed by name. They hold every
	// object a pipeline selects, also when no target or input uses it.
	Subscriptions map[string]*v1alpha1.Subscription
	Outputs       map[string]*v1alpha1.Output
	Inputs        map[string]SelectedInput
	// OutputProcessors are the processor chains of the selected outputs that have one, keyed by output
	// (processors.go has the order). A chain may name a Processor that does not exist.
	OutputProcessors map[string][]string
	// Processors are the existing Processors that the chains of the selected outputs and inputs name, and
	// those an event-combine among them runs (CombinedProcessors), keyed by name.
	Processors map[string]*v1alpha1.Processor
	// Problems explain, one sentence each and sorted, what was skipped and
	// why. They name objects and fields, never secrets.
	Problems []string
}

// SelectedTarget is a target with what its pipelines apply to it.
type SelectedTarget struct {
	Target *v1alpha1.Target
	// Subscriptions and Outputs are the sorted names of the union over the
	// pipelines that select the target. Outputs may be empty.
	Subscriptions []string
	Outputs       []string
	// Labels is the union of those pipelines' labels (nil when none). When two
	// pipelines set a key differently, the one whose name sorts first wins and
	// the conflict is reported as a problem.
	Labels map[string]string
}

// SelectedInput is an input with the outputs it feeds: the sorted union of
// the outputs of the pipelines that select it. Outputs may be empty; the
// collector rejects such an input, which the renderer reports.
type SelectedInput struct {
	Input   *v1alpha1.Input
	Outputs []string
	// Processors is the input's processor chain (processors.go), nil when empty.
	Processors []string
}

// Counts are the sizes of a Selection, typed as the Cluster status fields
// they fill (pipelinesCount, targetsCount, …).
type Counts struct {
	Pipelines     int32
	Targets       int32
	Subscriptions int32
	Outputs       int32
	Inputs        int32
	Processors    int32
}

// Summary is what a Pipeline's status says of its own selection: its sizes, its problems and the Outputs
// and Inputs it selects (sorted). It points at no object.
type Summary struct {
	Counts   Counts
	Problems []string
	Outputs  []string
	Inputs   []string
}

// Summary returns the summary of s.
func (s Selection) Summary() Summary {
	return Summary{Counts: s.Counts(), Problems: s.Problems, Outputs: sortedKeys(s.Outputs), Inputs: sortedKeys(s.Inputs)}
}

// Counts returns the sizes of s.
func (s Selection) Counts() Counts {
	return Counts{
		Pipelines:     int32(len(s.Pipelines)),
		Targets:       int32(len(s.Targets)),
		Subscriptions: int32(len(s.Subscriptions)),
		Outputs:       int32(len(s.Outputs)),
		Inputs:        int32(len(s.Inputs)),
		Processors:    int32(len(s.Processors)),
	}
}

// TargetNames returns the names of the selected targets, sorted: the input of
// placement.
func (s Selection) TargetNames() []string {
	names := make([]string, len(s.Targets))
	for i, t := range s.Targets {
		names[i] = t.Target.Name
	}
	return names
}

// Target returns the selected target called name.
func (s Selection) Target(name string) (SelectedTarget, bool) {
	i := sort.Search(len(s.Targets), func(i int) bool { return s.Targets[i].Target.Name >= name })
	if i < len(s.Targets) && s.Targets[i].Target.Name == name {
		return s.Targets[i], true
	}
	return SelectedTarget{}, false
}
