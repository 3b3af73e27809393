package selection

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// The fixtures live in one namespace and belong, unless told otherwise, to
// Cluster c1.

func meta(name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels}
}

func target(name string, labels map[string]string) v1alpha1.Target {
	return v1alpha1.Target{ObjectMeta: meta(name, labels), Spec: v1alpha1.TargetSpec{Address: name + ":57400", Profile: "default"}}
}

func subscription(name string, labels map[string]string) v1alpha1.Subscription {
	return v1alpha1.Subscription{ObjectMeta: meta(name, labels), Spec: v1alpha1.SubscriptionSpec{Paths: []string{"/interfaces"}}}
}

func output(name string, labels map[string]string) v1alpha1.Output {
	return v1alpha1.Output{ObjectMeta: meta(name, labels), Spec: v1alpha1.OutputSpec{Type: "file"}}
}

func input(name string, labels map[string]string) v1alpha1.Input {
	return v1alpha1.Input{ObjectMeta: meta(name, labels), Spec: v1alpha1.InputSpec{Type: "nats"}}
}

// pipeline returns a pipeline of spec, for Cluster c1 when spec names none.
func pipeline(name string, spec v1alpha1.PipelineSpec) v1alpha1.Pipeline {
	if spec.ClusterRef == "" {
		spec.ClusterRef = "c1"
	}
	return v1alpha1.Pipeline{ObjectMeta: meta(name, nil), Spec: spec}
}

func match(labels map[string]string) []metav1.LabelSelector {
	return []metav1.LabelSelector{{MatchLabels: labels}}
}

func outputRefs(names ...string) *v1alpha1.OutputSelection {
	return &v1alpha1.OutputSelection{OutputRefs: names}
}

func inputRefs(names ...string) *v1alpha1.InputSelection {
	return &v1alpha1.InputSelection{InputRefs: names}
}

func ptr[T any](v T) *T { return &v }

// namespace is a small namespace: four routers (two in dc1), two
// subscriptions, two outputs and one input.
func namespace(pipelines ...v1alpha1.Pipeline) Objects {
	return Objects{
		Pipelines: pipelines,
		Targets: []v1alpha1.Target{
			target("r1", map[string]string{"dc": "dc1"}),
			target("r2", map[string]string{"dc": "dc1"}),
			target("r3", map[string]string{"dc": "dc2"}),
			target("r4", nil),
		},
		Subscriptions: []v1alpha1.Subscription{
			subscription("counters", map[string]string{"kind": "stats"}),
			subscription("state", nil),
		},
		Outputs: []v1alpha1.Output{
			output("kafka", map[string]string{"tier": "hot"}),
			output("file", nil),
		},
		Inputs: []v1alpha1.Input{input("bus", map[string]string{"from": "edge"})},
	}
}

// picked is a SelectedTarget without its object, for comparisons.
type picked struct {
	subscriptions, outputs []string
	labels                 map[string]string
}

// summary is a Selection reduced to names, for comparisons.
type summary struct {
	pipelines     []string
	targets       map[string]picked
	subscriptions []string
	outputs       []string
	inputs        map[string][]string
	problems      []string
}

func summarize(s Selection) summary {
	sum := summary{pipelines: s.Pipelines, problems: s.Problems}
	for _, t := range s.Targets {
		if sum.targets == nil {
			sum.targets = map[string]picked{}
		}
		sum.targets[t.Target.Name] = picked{t.Subscriptions, t.Outputs, t.Labels}
	}
	sum.subscriptions = sortedDistinct(keysOf(s.Subscriptions))
	sum.outputs = sortedDistinct(keysOf(s.Outputs))
	for name, in := range s.Inputs {
		if sum.inputs == nil {
			sum.inputs = map[string][]string{}
		}
		sum.inputs[name] = in.Outputs
	}
	return sum
}

func keysOf[V any](m map[string]V) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
