package selection

import (
	"fmt"
	"iter"
	"reflect"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// targetsWithPicks yields targets with the picks of p, made from picksOf
// (the same targets unless a test says otherwise).
func targetsWithPicks(p *Prepared, targets []*v1alpha1.Target, picksOf []*v1alpha1.Target) iter.Seq2[*v1alpha1.Target, *TargetPick] {
	return func(yield func(*v1alpha1.Target, *TargetPick) bool) {
		for i, t := range targets {
			pick := p.Target(picksOf[i])
			if !yield(t, &pick) {
				return
			}
		}
	}
}

func pointersTo(targets ...v1alpha1.Target) []*v1alpha1.Target {
	out := make([]*v1alpha1.Target, len(targets))
	for i := range targets {
		out[i] = &targets[i]
	}
	return out
}

const bareProblem = `pipeline "bare": selects targets but no subscription; a collector rejects a target without subscriptions, so this pipeline's targets are skipped`

func TestPreparedTarget(t *testing.T) {
	dc1 := map[string]string{"dc": "dc1"}
	counters := []string{"counters"}
	type pickSummary struct {
		selected  bool
		picked    picked
		pipelines []string
		problems  []string
	}
	tests := []struct {
		name      string
		pipelines []v1alpha1.Pipeline
		target    v1alpha1.Target
		want      pickSummary
	}{
		{
			name:   "picks nothing without pipelines",
			target: target("r1", dc1),
			want:   pickSummary{},
		},
		{
			name:      "picks a target by reference",
			pipelines: []v1alpha1.Pipeline{pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r4"}, SubscriptionRefs: counters, Outputs: outputRefs("file")})},
			target:    target("r4", nil),
			want:      pickSummary{selected: true, picked: picked{subscriptions: counters, outputs: []string{"file"}}, pipelines: []string{"p1"}},
		},
		{
			name:      "picks a target by label, whether it was listed or not",
			pipelines: []v1alpha1.Pipeline{pipeline("p1", v1alpha1.PipelineSpec{TargetSelectors: match(dc1), SubscriptionRefs: counters})},
			target:    target("new", dc1),
			want:      pickSummary{selected: true, picked: picked{subscriptions: counters}, pipelines: []string{"p1"}},
		},
		{
			name:      "does not pick a target that neither references nor selectors name",
			pipelines: []v1alpha1.Pipeline{pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, TargetSelectors: match(dc1), SubscriptionRefs: counters})},
			target:    target("r3", map[string]string{"dc": "dc2"}),
			want:      pickSummary{},
		},
		{
			name: "ignores the pipelines of other clusters and disabled ones",
			pipelines: []v1alpha1.Pipeline{
				pipeline("other", v1alpha1.PipelineSpec{ClusterRef: "c2", TargetRefs: []string{"r1"}, SubscriptionRefs: counters}),
				pipeline("off", v1alpha1.PipelineSpec{Enabled: ptr(false), TargetRefs: []string{"r1"}, SubscriptionRefs: counters}),
			},
			target: target("r1", dc1),
			want:   pickSummary{},
		},
		{
			name: "skips an invalid selector and picks by the others",
			pipelines: []v1alpha1.Pipeline{pipeline("p1", v1alpha1.PipelineSpec{
				TargetSelectors: []metav1.LabelSelector{
					{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "dc", Operator: "Near", Values: []string{"dc1"}}}},
					{MatchLabels: dc1},
				},
				SubscriptionRefs: counters,
			})},
			target: target("r1", dc1),
			want:   pickSummary{selected: true, picked: picked{subscriptions: counters}, pipelines: []string{"p1"}},
		},
		{
			name:      "does not select a target that only a pipeline without subscriptions picks, and says so",
			pipelines: []v1alpha1.Pipeline{pipeline("bare", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, Outputs: outputRefs("file")})},
			target:    target("r1", dc1),
			want:      pickSummary{pipelines: []string{"bare"}, problems: []string{bareProblem}},
		},
		{
			name: "selects a target that a pipeline with subscriptions also picks, without the other's outputs",
			pipelines: []v1alpha1.Pipeline{
				pipeline("full", v1alpha1.PipelineSpec{TargetSelectors: match(dc1), SubscriptionRefs: counters}),
				pipeline("bare", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, Outputs: outputRefs("file")}),
			},
			target: target("r1", dc1),
			want:   pickSummary{selected: true, picked: picked{subscriptions: counters}, pipelines: []string{"bare", "full"}, problems: []string{bareProblem}},
		},
		{
			name: "unions the pipelines in name order and reports their conflicting labels",
			pipelines: []v1alpha1.Pipeline{
				pipeline("b", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"state"}, Outputs: outputRefs("kafka"), Labels: map[string]string{"env": "test", "team": "net"}}),
				pipeline("a", v1alpha1.PipelineSpec{TargetSelectors: match(dc1), SubscriptionRefs: counters, Outputs: outputRefs("file"), Labels: map[string]string{"env": "prod"}}),
			},
			target: target("r1", dc1),
			want: pickSummary{
				selected:  true,
				picked:    picked{subscriptions: []string{"counters", "state"}, outputs: []string{"file", "kafka"}, labels: map[string]string{"env": "prod", "team": "net"}},
				pipelines: []string{"a", "b"},
				problems:  []string{`pipelines "a" and "b" select the same targets and set label "env" differently; "a" wins`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pick := Prepare("c1", namespace(tt.pipelines...)).Target(&tt.target)
			if pick.Target.Target != &tt.target {
				t.Fatalf("the pick points at %p, not at its target %p", pick.Target.Target, &tt.target)
			}
			got := pickSummary{
				selected:  pick.Selected,
				picked:    picked{pick.Target.Subscriptions, pick.Target.Outputs, pick.Target.Labels},
				pipelines: pick.Pipelines,
				problems:  pick.Problems,
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Target:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestPreparedTargetDependsOnlyOnTheTargetsNameAndLabels(t *testing.T) {
	p := Prepare("c1", namespace(
		pipeline("p1", v1alpha1.PipelineSpec{TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"counters"}, Labels: map[string]string{"k": "1"}}),
		pipeline("p2", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"state"}, Labels: map[string]string{"k": "2"}}),
	))
	before := target("r1", map[string]string{"dc": "dc1"})
	after := *before.DeepCopy()
	after.Spec.Address, after.Spec.Profile, after.ResourceVersion = "10.0.0.1:57400", "other", "7"
	first, second := p.Target(&before), p.Target(&after)
	second.Target.Target = first.Target.Target
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("the pick depends on more than the name and labels:\n%+v\n%+v", first, second)
	}
}

func TestPreparedSelection(t *testing.T) {
	counters := []string{"counters"}
	dc1 := map[string]string{"dc": "dc1"}
	tests := []struct {
		name      string
		pipelines []v1alpha1.Pipeline
		targets   []v1alpha1.Target
		want      summary
	}{
		{
			name:      "reports a targetRef to a target that is not yielded",
			pipelines: []v1alpha1.Pipeline{pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r1", "r9"}, SubscriptionRefs: counters})},
			targets:   []v1alpha1.Target{target("r1", nil)},
			want: summary{
				pipelines: []string{"p1"}, targets: map[string]picked{"r1": {subscriptions: counters}}, subscriptions: counters,
				problems: []string{`pipeline "p1": targetRef "r9" not found`},
			},
		},
		{
			name:      "finds a referenced target that a selector of the same pipeline picks too",
			pipelines: []v1alpha1.Pipeline{pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r9"}, TargetSelectors: match(dc1), SubscriptionRefs: counters})},
			targets:   []v1alpha1.Target{target("r9", dc1)},
			want:      summary{pipelines: []string{"p1"}, targets: map[string]picked{"r9": {subscriptions: counters}}, subscriptions: counters},
		},
		{
			name:      "finds a referenced target that only a pipeline without subscriptions picks",
			pipelines: []v1alpha1.Pipeline{pipeline("bare", v1alpha1.PipelineSpec{TargetRefs: []string{"r9"}})},
			targets:   []v1alpha1.Target{target("r9", nil)},
			want:      summary{pipelines: []string{"bare"}, problems: []string{bareProblem}},
		},
		{
			name:      "reports a pipeline without subscriptions only when it picks a target",
			pipelines: []v1alpha1.Pipeline{pipeline("bare", v1alpha1.PipelineSpec{TargetSelectors: match(map[string]string{"dc": "dc9"})})},
			targets:   []v1alpha1.Target{target("r1", dc1)},
			want:      summary{pipelines: []string{"bare"}},
		},
		{
			name:      "sorts the targets by name whatever order they come in",
			pipelines: []v1alpha1.Pipeline{pipeline("p1", v1alpha1.PipelineSpec{TargetSelectors: []metav1.LabelSelector{{}}, SubscriptionRefs: counters})},
			targets:   []v1alpha1.Target{target("r3", nil), target("r1", nil), target("r2", nil)},
			want: summary{
				pipelines: []string{"p1"}, subscriptions: counters,
				targets: map[string]picked{"r1": {subscriptions: counters}, "r2": {subscriptions: counters}, "r3": {subscriptions: counters}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Prepare("c1", namespace(tt.pipelines...))
			targets := pointersTo(tt.targets...)
			sel := p.Selection(targetsWithPicks(p, targets, targets))
			if got := summarize(sel); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Selection:\n got %+v\nwant %+v", got, tt.want)
			}
			if !slices.IsSorted(sel.TargetNames()) {
				t.Fatalf("targets are not sorted: %v", sel.TargetNames())
			}
		})
	}
}

func TestPreparedSelectionPointsAtTheYieldedTargets(t *testing.T) {
	p := Prepare("c1", namespace(pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"counters"}})))
	old := target("r1", nil)
	current := target("r1", nil)
	current.Spec.Address = "10.0.0.1:57400"
	sel := p.Selection(targetsWithPicks(p, []*v1alpha1.Target{&current}, []*v1alpha1.Target{&old}))
	if len(sel.Targets) != 1 || sel.Targets[0].Target != &current {
		t.Fatalf("the selected target is not the yielded one: %+v", sel.Targets)
	}
}

func TestPreparedSelectionsDoNotShareTheirMapsAndSlices(t *testing.T) {
	in := namespace(pipeline("p1", v1alpha1.PipelineSpec{
		TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"counters"}, Inputs: inputRefs("bus"),
		Outputs: &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"drop"}},
	}))
	in.Processors = []v1alpha1.Processor{{ObjectMeta: meta("drop", nil)}}
	p := Prepare("c1", in)
	targets := pointersTo(in.Targets...)
	first := p.Selection(targetsWithPicks(p, targets, targets))
	want := Resolve("c1", in)
	first.Pipelines[0] = "changed"
	first.Targets[0] = SelectedTarget{}
	first.Problems = append(first.Problems, "changed")
	clear(first.Subscriptions)
	clear(first.Outputs)
	clear(first.Inputs)
	clear(first.Processors)
	clear(first.OutputProcessors)
	if second := p.Selection(targetsWithPicks(p, targets, targets)); !reflect.DeepEqual(second, want) {
		t.Fatalf("changing a Selection changed the next one:\n got %+v\nwant %+v", second, want)
	}
}

func TestPreparedKey(t *testing.T) {
	base := func() Objects {
		in := namespace(
			pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"counters"}}),
			pipeline("off", v1alpha1.PipelineSpec{Enabled: ptr(false)}),
			pipeline("other", v1alpha1.PipelineSpec{ClusterRef: "c2"}),
		)
		in.Processors = []v1alpha1.Processor{{ObjectMeta: meta("drop", nil)}}
		for i := range in.Pipelines {
			in.Pipelines[i].UID, in.Pipelines[i].Generation = types.UID("u-"+in.Pipelines[i].Name), 1
		}
		in.Subscriptions[0].Generation = 1
		return in
	}
	tests := []struct {
		name    string
		cluster string
		change  func(*Objects)
		changed bool
	}{
		{name: "is the same for the same objects", change: func(*Objects) {}},
		{name: "does not depend on the order of the lists", change: func(in *Objects) {
			slices.Reverse(in.Pipelines)
			slices.Reverse(in.Subscriptions)
			slices.Reverse(in.Outputs)
		}},
		{name: "does not depend on targets", change: func(in *Objects) {
			in.Targets[0].Generation, in.Targets[0].Labels = 9, nil
			in.Targets = append(in.Targets, target("r9", nil))
		}},
		{name: "ignores the pipelines of other clusters", change: func(in *Objects) { in.Pipelines[2].Generation = 9 }},
		{name: "ignores disabled pipelines", change: func(in *Objects) { in.Pipelines[1].Generation = 9 }},
		{name: "changes with another cluster", cluster: "c2", change: func(*Objects) {}, changed: true},
		{name: "changes when a pipeline of the cluster changes", change: func(in *Objects) { in.Pipelines[0].Generation = 9 }, changed: true},
		{name: "changes when a pipeline of the cluster is recreated", change: func(in *Objects) { in.Pipelines[0].UID = "new" }, changed: true},
		{name: "changes when a pipeline is enabled", change: func(in *Objects) {
			in.Pipelines[1].Spec.Enabled, in.Pipelines[1].Generation = ptr(true), 9
		}, changed: true},
		{name: "changes when a pipeline joins the cluster", change: func(in *Objects) {
			in.Pipelines[2].Spec.ClusterRef, in.Pipelines[2].Generation = "c1", 9
		}, changed: true},
		{name: "changes when a subscription changes", change: func(in *Objects) { in.Subscriptions[0].Generation = 9 }, changed: true},
		{name: "stays when only a status changes (a new resourceVersion, the same generation)", change: func(in *Objects) {
			in.Pipelines[0].ResourceVersion, in.Outputs[0].ResourceVersion = "10", "10"
			in.Outputs[0].Status.Conditions = []metav1.Condition{{Type: "Accepted"}}
		}},
		{name: "changes when a subscription's labels change", change: func(in *Objects) {
			in.Subscriptions[0].Labels = map[string]string{"tier": "gold"}
		}, changed: true},
		{name: "changes when a subscription goes", change: func(in *Objects) { in.Subscriptions = in.Subscriptions[1:] }, changed: true},
		{name: "changes when an output changes", change: func(in *Objects) { in.Outputs[1].Generation = 9 }, changed: true},
		{name: "changes when an input changes", change: func(in *Objects) { in.Inputs[0].Generation = 9 }, changed: true},
		{name: "changes when a processor changes", change: func(in *Objects) { in.Processors[0].Generation = 9 }, changed: true},
		{name: "changes when a processor comes", change: func(in *Objects) {
			in.Processors = append(in.Processors, v1alpha1.Processor{ObjectMeta: meta("tag", nil)})
		}, changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := Prepare("c1", base()).Key()
			in := base()
			tt.change(&in)
			cluster := "c1"
			if tt.cluster != "" {
				cluster = tt.cluster
			}
			if after := Prepare(cluster, in).Key(); (after != before) != tt.changed {
				t.Fatalf("key changed %v, want %v:\nbefore %q\nafter  %q", after != before, tt.changed, before, after)
			}
		})
	}
}

func TestPrepareIgnoresTargets(t *testing.T) {
	in := namespace(
		pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"counters"}, Outputs: outputRefs("kafka"), Inputs: inputRefs("bus")}),
		pipeline("p2", v1alpha1.PipelineSpec{TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"state"}}),
	)
	without := in
	without.Targets = nil
	with, none := Prepare("c1", in), Prepare("c1", without)
	if with.Key() != none.Key() {
		t.Fatalf("the key depends on targets: %q, %q", with.Key(), none.Key())
	}
	targets := pointersTo(in.Targets...)
	if a, b := with.Selection(targetsWithPicks(with, targets, targets)), none.Selection(targetsWithPicks(none, targets, targets)); !reflect.DeepEqual(a, b) {
		t.Fatalf("the selection depends on the targets Prepare was given:\n%+v\n%+v", a, b)
	}
}

func TestPreparedTargetMayBeCalledConcurrently(t *testing.T) {
	in := namespace(
		pipeline("p1", v1alpha1.PipelineSpec{TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"counters"}}),
		pipeline("p2", v1alpha1.PipelineSpec{TargetSelectors: []metav1.LabelSelector{{}}, SubscriptionRefs: []string{"state"}}),
	)
	want := Resolve("c1", in)
	p := Prepare("c1", in)
	picks := make([]TargetPick, len(in.Targets))
	var wg sync.WaitGroup
	for i := range in.Targets {
		wg.Go(func() { picks[i] = p.Target(&in.Targets[i]) })
	}
	wg.Wait()
	got := p.Selection(func(yield func(*v1alpha1.Target, *TargetPick) bool) {
		for i := range in.Targets {
			if !yield(&in.Targets[i], &picks[i]) {
				return
			}
		}
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("concurrent picks:\n got %+v\nwant %+v", summarize(got), summarize(want))
	}
}

func TestPreparedTargetTellsApartManyPipelines(t *testing.T) {
	// Past 127 pipelines an index takes two bytes of a combination's key.
	var pipelines []v1alpha1.Pipeline
	for i := range 300 {
		pipelines = append(pipelines, pipeline(fmt.Sprintf("p%03d", i), v1alpha1.PipelineSpec{
			TargetRefs: []string{fmt.Sprintf("r%d", i%7)}, SubscriptionRefs: []string{"counters"},
			Labels: map[string]string{fmt.Sprintf("l%03d", i): "x"},
		}))
	}
	in := namespace(pipelines...)
	for i := range 7 {
		in.Targets = append(in.Targets, target(fmt.Sprintf("r%d", i), nil))
	}
	in.Targets = in.Targets[4:] // the namespace's own r1…r4 go
	if got, want := Resolve("c1", in), referenceResolve("c1", in); !reflect.DeepEqual(got, want) {
		t.Fatalf("Resolve with 300 pipelines:\n got %+v\nwant %+v", summarize(got), summarize(want))
	}
}

// Two picks of one Prepared are the same exactly when they are equal but for their Target: the labels of a
// relabelled Target that the same Pipelines pick give the same pick, others do not.
func TestTargetPickSameIsEqualButForTheTarget(t *testing.T) {
	p := Prepare("c1", namespace(
		pipeline("p1", v1alpha1.PipelineSpec{TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"counters"}, Labels: map[string]string{"k": "1"}}),
		pipeline("p2", v1alpha1.PipelineSpec{TargetSelectors: match(map[string]string{"role": "edge"}), SubscriptionRefs: []string{"state"}, Labels: map[string]string{"k": "2"}}),
		pipeline("p3", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}}),
	))
	labelSets := []map[string]string{nil, {"dc": "dc1"}, {"dc": "dc1", "x": "y"}, {"role": "edge"}, {"dc": "dc1", "role": "edge"}, {"dc": "dc2"}}
	var picks []TargetPick
	for _, name := range []string{"r1", "r2"} {
		for _, l := range labelSets {
			tg := target(name, l)
			picks = append(picks, p.Target(&tg))
		}
	}
	sameCount := 0
	for _, a := range picks {
		for _, b := range picks {
			bb := b
			bb.Target.Target = a.Target.Target
			equal := reflect.DeepEqual(a, bb)
			if a.Same(b) != equal {
				t.Fatalf("Same = %v, equal but for the Target = %v:\n%+v\n%+v", a.Same(b), equal, a, b)
			}
			if equal {
				sameCount++
			}
		}
	}
	if sameCount <= len(picks) {
		t.Fatalf("no two different Targets made the same pick: the test tells nothing")
	}
}
