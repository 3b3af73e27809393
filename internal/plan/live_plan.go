package plan

import (
	"fmt"
	"maps"
	"slices"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/clusterplacement"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// overrides are the changes a live plan asks about; nil leaves the Cluster's value.
type overrides struct {
	replicas *int32
	// podCapacity 0 asks for automatic capacity.
	podCapacity *int32
}

// liveAnswer is the answer of `plan --cluster`; docs/planning.md describes it. Lists are never null.
type liveAnswer struct {
	// Cluster is namespace/name.
	Cluster     string `json:"cluster"`
	Replicas    change `json:"replicas"`
	PodCapacity change `json:"podCapacity"`
	// Capacity is the bound on every pod's load that the placement after the change uses.
	Capacity int       `json:"capacity"`
	Pods     []livePod `json:"pods"`
	// UnassignedNow are the selected targets whose status records no pod; UnassignedAfter those placement
	// leaves without one. Skipped targets are in neither.
	UnassignedNow   []string `json:"unassignedNow"`
	UnassignedAfter []string `json:"unassignedAfter"`
	// Skipped are the selected targets the operator reports as Skipped (they cannot be configured): no pod
	// takes them, now or after.
	Skipped         []string   `json:"skipped"`
	Moves           []liveMove `json:"moves"`
	LowerBoundMoves int        `json:"lowerBoundMoves"`
}

// change is a setting before and after; for podCapacity 0 is automatic.
type change struct {
	Now   int `json:"now"`
	After int `json:"after"`
}

// livePod is one collector pod: whether the Cluster asks for it now and after, and its targets then.
type livePod struct {
	Name         string   `json:"name"`
	DesiredNow   bool     `json:"desiredNow"`
	DesiredAfter bool     `json:"desiredAfter"`
	Now          []string `json:"now"`
	After        []string `json:"after"`
}

// liveMove is a target that changes pods; an empty From or To is no pod.
type liveMove struct {
	Target string `json:"target"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// planLive plans the Cluster of objs: "now" is where the Targets' statuses record its targets, as the
// operator wrote them and reads them back; "after" is where the operator's placement, with the overrides
// applied, puts them once every pod the Cluster then asks for is ready. It calls the reconciler's own
// placement (clusterplacement.Place) with the reconciler's input: the targets the Cluster's Pipelines
// select (selection.Resolve) but those reported Skipped, their recorded pods and last pods
// (clusterplacement.Recorded), the Cluster's pods (across its failure domains) and its capacity.
func planLive(objs liveObjects, o overrides) (liveAnswer, error) {
	before := objs.cluster
	after := before.DeepCopy()
	if o.replicas != nil {
		after.Spec.Replicas = o.replicas
	}
	if o.podCapacity != nil {
		after.Spec.TargetDistribution.PodCapacity = o.podCapacity
		if *o.podCapacity == 0 {
			after.Spec.TargetDistribution.PodCapacity = nil
		}
	}
	desiredNow, err := clusterplacement.SettledOrdinals(before)
	if err != nil {
		return liveAnswer{}, fmt.Errorf("cluster %s now: %w", before.Name, err)
	}
	desiredAfter, err := clusterplacement.SettledOrdinals(after)
	if err != nil {
		return liveAnswer{}, fmt.Errorf("cluster %s after the change: %w", before.Name, err)
	}

	sel := selection.Resolve(before.Name, objs.objects)
	current, last := clusterplacement.Recorded(before, sel)
	var placeable, skipped []string
	for _, st := range sel.Targets {
		if st.Target.Status.ClusterStates[before.Name].State == operatorv1alpha1.TargetSkipped {
			skipped = append(skipped, st.Target.Name)
		} else {
			placeable = append(placeable, st.Target.Name)
		}
	}
	plan := clusterplacement.Place(clusterplacement.Fleet{
		PodCapacity: clusterplacement.PodCapacity(after),
		Desired:     desiredAfter,
		Ready:       desiredAfter,
		Placeable:   placeable,
		Skipped:     skipped,
		Current:     current,
		Last:        last,
		Weights:     clusterplacement.Weigh(after, sel),
	})

	a := liveAnswer{
		Cluster:         before.Namespace + "/" + before.Name,
		Replicas:        change{Now: int(workload.Replicas(before)), After: int(workload.Replicas(after))},
		PodCapacity:     change{Now: clusterplacement.PodCapacity(before), After: clusterplacement.PodCapacity(after)},
		Capacity:        plan.Result.Capacity,
		UnassignedNow:   []string{},
		UnassignedAfter: plan.Result.Unassigned,
		Skipped:         append([]string{}, skipped...),
		Moves:           make([]liveMove, 0, len(plan.Result.Moves)),
		LowerBoundMoves: plan.Result.LowerBoundMoves,
	}
	pods := map[int]*livePod{}
	pod := func(ordinal int) *livePod {
		p, ok := pods[ordinal]
		if !ok {
			p = &livePod{Name: workload.PodName(before, ordinal), Now: []string{}, After: []string{}}
			pods[ordinal] = p
		}
		return p
	}
	for _, o := range desiredNow {
		pod(o).DesiredNow = true
	}
	for _, o := range desiredAfter {
		pod(o).DesiredAfter = true
	}
	for _, name := range placeable {
		if o, ok := current[name]; ok {
			pod(o).Now = append(pod(o).Now, name)
		} else {
			a.UnassignedNow = append(a.UnassignedNow, name)
		}
		if o, ok := plan.Assignment(name); ok {
			pod(o).After = append(pod(o).After, name)
		}
	}
	for _, o := range slices.Sorted(maps.Keys(pods)) {
		a.Pods = append(a.Pods, *pods[o])
	}
	if a.Pods == nil {
		a.Pods = []livePod{}
	}
	for _, m := range plan.Result.Moves {
		mv := liveMove{Target: m.Target, From: workload.PodName(before, m.From)}
		if m.To >= 0 {
			mv.To = workload.PodName(before, m.To)
		}
		a.Moves = append(a.Moves, mv)
	}
	return a, nil
}
