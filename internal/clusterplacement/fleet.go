package clusterplacement

import (
	"maps"
	"slices"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/balance"
	"github.com/gnmic-operator/gnmic-operator/internal/domains"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// Fleet is what placing one Cluster's targets depends on.
type Fleet struct {
	// PodCapacity is the Cluster's spec.targetDistribution.podCapacity; 0 is automatic (PodCapacity).
	PodCapacity int
	// Desired are the ordinals of the pods the Cluster should run (DesiredOrdinals): a target's last pod
	// outside them is forgotten.
	Desired []int
	// Ready are the ordinals of the pods that take targets now.
	Ready []int
	// Holding are the ordinals of the pods within their grace period: the targets recorded on them stay
	// there, outside placement.
	Holding []int
	// Placeable are the selected targets placement may put on pods: those that can be configured.
	Placeable []string
	// Skipped are the selected targets that cannot be configured: they go nowhere and remember the pod they
	// belong on.
	Skipped []string
	// Current and Last are the targets' pods and last pods as their statuses record them (Recorded).
	Current, Last map[string]int
	// Weights is what the targets weigh and how the pods fill (Weigh); the zero value places by count.
	Weights Weights
}

// Plan is where the targets of a Fleet go.
type Plan struct {
	// Input is what placement was given: the ready pods and the targets that are not held.
	Input placement.Input
	// Result is placement's answer for Input.
	Result placement.Result
	// Held are the targets that stay on a holding pod, by ordinal.
	Held map[string]int
	// Last is the ordinal of the pod each target belongs on while it is not there: what the Targets'
	// status.clusterStates[].lastPod say next.
	Last map[string]int
}

// Assignment is the ordinal a target ends on, and whether it has one.
func (p Plan) Assignment(target string) (int, bool) {
	if o, ok := p.Held[target]; ok {
		return o, true
	}
	o, ok := p.Result.Assignments[target]
	return o, ok
}

// Place decides which pod holds each target of the fleet: targets recorded on holding pods stay there, the
// rest go through bounded-load rendezvous placement over the ready pods, by weight when the fleet's targets
// weigh more than their count, each target going back to its last pod when it can (placement.Place); then it
// computes every target's next last pod.
func Place(f Fleet) Plan {
	holding := make(map[int]bool, len(f.Holding))
	for _, o := range f.Holding {
		holding[o] = true
	}
	desired := make(map[int]bool, len(f.Desired))
	for _, o := range f.Desired {
		desired[o] = true
	}
	plan := Plan{Held: map[string]int{}}
	in := placement.Input{Pods: f.Ready, PodCapacity: f.PodCapacity, Current: map[string]int{}, Last: map[string]int{},
		Fill: f.Weights.Fill}
	for _, name := range f.Placeable {
		if o, ok := f.Current[name]; ok && holding[o] {
			plan.Held[name] = o
			continue
		}
		in.Targets = append(in.Targets, placement.Target{Name: name, Weight: f.Weights.Of[name]})
		if o, ok := f.Current[name]; ok {
			in.Current[name] = o
		}
		if o, ok := f.Last[name]; ok {
			in.Last[name] = o
		}
	}
	plan.Input = in
	plan.Result = placement.Place(in)
	plan.Last = placement.Lasts(in, plan.Result, func(ordinal int) bool { return desired[ordinal] })
	for name := range plan.Held {
		if o, ok := f.Last[name]; ok {
			plan.Last[name] = o
		}
	}
	for _, name := range f.Skipped {
		if o, ok := f.Last[name]; ok {
			plan.Last[name] = o
		} else if o, ok := f.Current[name]; ok {
			plan.Last[name] = o
		}
	}
	return plan
}

// PodCapacity is the Cluster's fixed pod capacity, 0 for automatic.
func PodCapacity(c *v1alpha1.Cluster) int {
	if p := c.Spec.TargetDistribution.PodCapacity; p != nil {
		return int(*p)
	}
	return 0
}

// Recorded reads where the statuses of the selected targets say each is for the Cluster: the ordinal of its
// pod (status.clusterStates[cluster].pod) and of its last pod (lastPod). Pod names of no pod of the Cluster
// are left out.
func Recorded(c *v1alpha1.Cluster, sel selection.Selection) (current, last map[string]int) {
	current, last = map[string]int{}, map[string]int{}
	for _, st := range sel.Targets {
		r := RecordedOf(c, st.Target)
		if r.HasCurrent {
			current[st.Target.Name] = r.Current
		}
		if r.HasLast {
			last[st.Target.Name] = r.Last
		}
	}
	return current, last
}

// RecordedPods is where one Target's status says it is for a Cluster (Recorded).
type RecordedPods struct {
	Current, Last       int
	HasCurrent, HasLast bool
}

// RecordedOf is where t's status says it is for the Cluster c.
func RecordedOf(c *v1alpha1.Cluster, t *v1alpha1.Target) RecordedPods {
	var r RecordedPods
	state, ok := t.Status.ClusterStates[c.Name]
	if !ok {
		return r
	}
	if state.Pod != "" {
		r.Current, r.HasCurrent = workload.PodOrdinal(c, state.Pod)
	}
	if state.LastPod != "" {
		r.Last, r.HasLast = workload.PodOrdinal(c, state.LastPod)
	}
	return r
}

// DomainInput is the Cluster's domains and policy as the input of domains.Split, without pod counts.
func DomainInput(c *v1alpha1.Cluster) domains.Input {
	in := domains.Input{Replicas: int(workload.Replicas(c))}
	if p := c.Spec.DomainPolicy; p != nil {
		in.Policy = balance.Policy(p.PolicyName)
		if p.Priorities != nil {
			in.Order = p.Priorities.TargetOrder
		}
		if p.Proportions != nil {
			in.Proportions = map[string]int{}
			for name, share := range p.Proportions.TargetProportions {
				in.Proportions[name] = int(share)
			}
		}
		if p.Fallback != nil {
			in.StartupTimeout = p.Fallback.StartupTimeout.Duration
		}
	}
	for _, d := range c.Spec.Domains {
		minimum, maximum := workload.DomainReplicaLimits(d)
		in.Domains = append(in.Domains, domains.Domain{Name: d.Name, Min: minimum, Max: maximum})
	}
	return in
}

// SettledOrdinals are the ordinals of the pods the Cluster runs once every pod it asks for has started:
// 0..replicas-1, or on a Cluster with domains the pods of every domain as domainPolicy splits the replicas
// when no domain waits for pods (domains.Slot).
func SettledOrdinals(c *v1alpha1.Cluster) ([]int, error) {
	if len(c.Spec.Domains) == 0 {
		ordinals := make([]int, workload.Replicas(c))
		for o := range ordinals {
			ordinals[o] = o
		}
		return ordinals, nil
	}
	split, err := domains.Split(DomainInput(c))
	if err != nil {
		return nil, err
	}
	return split.Slots(), nil
}

// Equal tells whether placing f gives what placing o gives: everything Place reads is the same.
func (f Fleet) Equal(o Fleet) bool {
	return f.EqualBesidesRecorded(o) && maps.Equal(f.Current, o.Current) && maps.Equal(f.Last, o.Last)
}

// EqualBesidesRecorded is Equal but for Current and Last, for a caller that knows they did not change.
func (f Fleet) EqualBesidesRecorded(o Fleet) bool {
	return f.PodCapacity == o.PodCapacity && slices.Equal(f.Desired, o.Desired) && slices.Equal(f.Ready, o.Ready) &&
		slices.Equal(f.Holding, o.Holding) && f.Weights.Fill == o.Weights.Fill &&
		slices.Equal(f.Placeable, o.Placeable) && slices.Equal(f.Skipped, o.Skipped) && maps.Equal(f.Weights.Of, o.Weights.Of)
}
