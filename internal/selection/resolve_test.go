package selection

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestResolve(t *testing.T) {
	dc1 := map[string]string{"dc": "dc1"}
	counters := []string{"counters"}
	tests := []struct {
		name string
		in   Objects
		want summary
	}{
		{
			name: "selects nothing without pipelines",
			in:   namespace(),
			want: summary{},
		},
		{
			name: "selects targets by reference and by label, once each",
			in: namespace(pipeline("p1", v1alpha1.PipelineSpec{
				TargetRefs: []string{"r1", "r3"}, TargetSelectors: match(dc1), SubscriptionRefs: counters,
			})),
			want: summary{
				pipelines:     []string{"p1"},
				targets:       map[string]picked{"r1": {subscriptions: counters}, "r2": {subscriptions: counters}, "r3": {subscriptions: counters}},
				subscriptions: counters,
			},
		},
		{
			name: "ignores the pipelines of other clusters",
			in: namespace(pipeline("p1", v1alpha1.PipelineSpec{
				ClusterRef: "c2", TargetRefs: []string{"r1"}, SubscriptionRefs: counters,
			})),
			want: summary{},
		},
		{
			name: "ignores disabled pipelines and counts an unset enabled as enabled",
			in: namespace(
				pipeline("off", v1alpha1.PipelineSpec{Enabled: ptr(false), TargetRefs: []string{"r1"}, SubscriptionRefs: counters}),
				pipeline("on", v1alpha1.PipelineSpec{Enabled: ptr(true), TargetRefs: []string{"r2"}, SubscriptionRefs: counters}),
				pipeline("unset", v1alpha1.PipelineSpec{TargetRefs: []string{"r3"}, SubscriptionRefs: counters}),
			),
			want: summary{
				pipelines:     []string{"on", "unset"},
				targets:       map[string]picked{"r2": {subscriptions: counters}, "r3": {subscriptions: counters}},
				subscriptions: counters,
			},
		},
		{
			name: "gives a target the union of the subscriptions and outputs of the pipelines that select it",
			in: namespace(
				pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r1", "r2"}, SubscriptionRefs: counters, Outputs: outputRefs("kafka")}),
				pipeline("p2", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"state"}, Outputs: outputRefs("file")}),
			),
			want: summary{
				pipelines: []string{"p1", "p2"},
				targets: map[string]picked{
					"r1": {subscriptions: []string{"counters", "state"}, outputs: []string{"file", "kafka"}},
					"r2": {subscriptions: counters, outputs: []string{"kafka"}},
				},
				subscriptions: []string{"counters", "state"},
				outputs:       []string{"file", "kafka"},
			},
		},
		{
			name: "selects subscriptions and outputs by label",
			in: namespace(pipeline("p1", v1alpha1.PipelineSpec{
				TargetRefs:            []string{"r4"},
				SubscriptionSelectors: match(map[string]string{"kind": "stats"}),
				Outputs:               &v1alpha1.OutputSelection{OutputSelectors: match(map[string]string{"tier": "hot"})},
			})),
			want: summary{
				pipelines:     []string{"p1"},
				targets:       map[string]picked{"r4": {subscriptions: counters, outputs: []string{"kafka"}}},
				subscriptions: counters,
				outputs:       []string{"kafka"},
			},
		},
		{
			name: "selects every object of a kind with an empty selector",
			in: namespace(pipeline("p1", v1alpha1.PipelineSpec{
				TargetSelectors: []metav1.LabelSelector{{}}, SubscriptionRefs: counters,
			})),
			want: summary{
				pipelines: []string{"p1"},
				targets: map[string]picked{
					"r1": {subscriptions: counters}, "r2": {subscriptions: counters},
					"r3": {subscriptions: counters}, "r4": {subscriptions: counters},
				},
				subscriptions: counters,
			},
		},
		{
			name: "unions the labels of the pipelines and lets the first by name win a conflict",
			in: namespace(
				pipeline("b", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: counters, Labels: map[string]string{"env": "test", "team": "net"}}),
				pipeline("a", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: counters, Labels: map[string]string{"env": "prod", "site": "par"}}),
			),
			want: summary{
				pipelines:     []string{"a", "b"},
				targets:       map[string]picked{"r1": {subscriptions: counters, labels: map[string]string{"env": "prod", "site": "par", "team": "net"}}},
				subscriptions: counters,
				problems:      []string{`pipelines "a" and "b" select the same targets and set label "env" differently; "a" wins`},
			},
		},
		{
			name: "reports references to missing objects and skips them",
			in: namespace(pipeline("p1", v1alpha1.PipelineSpec{
				TargetRefs: []string{"r1", "r9"}, SubscriptionRefs: []string{"counters", "gone"},
				Outputs: outputRefs("nowhere"), Inputs: inputRefs("missing"),
			})),
			want: summary{
				pipelines:     []string{"p1"},
				targets:       map[string]picked{"r1": {subscriptions: counters}},
				subscriptions: counters,
				problems: []string{
					`pipeline "p1": inputRef "missing" not found`,
					`pipeline "p1": outputRef "nowhere" not found`,
					`pipeline "p1": subscriptionRef "gone" not found`,
					`pipeline "p1": targetRef "r9" not found`,
				},
			},
		},
		{
			name: "reports an invalid selector instead of failing",
			in: namespace(pipeline("p1", v1alpha1.PipelineSpec{
				TargetRefs: []string{"r1"},
				TargetSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "dc", Operator: "Near", Values: []string{"dc1"}},
				}}},
				SubscriptionRefs: counters,
			})),
			want: summary{
				pipelines:     []string{"p1"},
				targets:       map[string]picked{"r1": {subscriptions: counters}},
				subscriptions: counters,
				problems:      []string{`pipeline "p1": targetSelectors[0] is invalid: "Near" is not a valid label selector operator`},
			},
		},
		{
			name: "skips and reports the targets of a pipeline without subscriptions",
			in:   namespace(pipeline("p1", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, Outputs: outputRefs("file")})),
			want: summary{
				pipelines: []string{"p1"},
				outputs:   []string{"file"},
				problems:  []string{`pipeline "p1": selects targets but no subscription; a collector rejects a target without subscriptions, so this pipeline's targets are skipped`},
			},
		},
		{
			name: "keeps a target that another pipeline selects with subscriptions",
			in: namespace(
				pipeline("bare", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, Outputs: outputRefs("file")}),
				pipeline("full", v1alpha1.PipelineSpec{TargetRefs: []string{"r1"}, SubscriptionRefs: counters}),
			),
			want: summary{
				pipelines:     []string{"bare", "full"},
				targets:       map[string]picked{"r1": {subscriptions: counters}},
				subscriptions: counters,
				outputs:       []string{"file"},
				problems:      []string{`pipeline "bare": selects targets but no subscription; a collector rejects a target without subscriptions, so this pipeline's targets are skipped`},
			},
		},
		{
			name: "feeds an input the outputs of every pipeline that selects it",
			in: namespace(
				pipeline("p1", v1alpha1.PipelineSpec{Inputs: inputRefs("bus"), Outputs: outputRefs("kafka")}),
				pipeline("p2", v1alpha1.PipelineSpec{
					Inputs:  &v1alpha1.InputSelection{InputSelectors: match(map[string]string{"from": "edge"})},
					Outputs: outputRefs("file"),
				}),
			),
			want: summary{
				pipelines: []string{"p1", "p2"},
				outputs:   []string{"file", "kafka"},
				inputs:    map[string][]string{"bus": {"file", "kafka"}},
			},
		},
		{
			name: "keeps an input whose pipelines select no output, with no outputs",
			in:   namespace(pipeline("p1", v1alpha1.PipelineSpec{Inputs: inputRefs("bus")})),
			want: summary{pipelines: []string{"p1"}, inputs: map[string][]string{"bus": nil}},
		},
		{
			name: "counts subscriptions and outputs that no target uses",
			in:   namespace(pipeline("p1", v1alpha1.PipelineSpec{SubscriptionRefs: []string{"state"}, Outputs: outputRefs("kafka")})),
			want: summary{pipelines: []string{"p1"}, subscriptions: []string{"state"}, outputs: []string{"kafka"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(Resolve("c1", tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Resolve:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestResolveDoesNotDependOnTheOrderOfItsInput(t *testing.T) {
	in := namespace(
		pipeline("p1", v1alpha1.PipelineSpec{TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"counters"}, Labels: map[string]string{"k": "1"}}),
		pipeline("p2", v1alpha1.PipelineSpec{TargetRefs: []string{"r1", "r4", "r9"}, SubscriptionRefs: []string{"state"}, Labels: map[string]string{"k": "2"}, Outputs: outputRefs("kafka")}),
		pipeline("p3", v1alpha1.PipelineSpec{Inputs: inputRefs("bus"), Outputs: outputRefs("file", "kafka")}),
	)
	want := Resolve("c1", in)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		shuffled := Objects{
			Pipelines:     shuffle(rng, in.Pipelines),
			Targets:       shuffle(rng, in.Targets),
			Subscriptions: shuffle(rng, in.Subscriptions),
			Outputs:       shuffle(rng, in.Outputs),
			Inputs:        shuffle(rng, in.Inputs),
		}
		if got := Resolve("c1", shuffled); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: Resolve depends on the input order:\n got %+v\nwant %+v", round, got, want)
		}
	}
}

func shuffle[T any](rng *rand.Rand, in []T) []T {
	out := slices.Clone(in)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
