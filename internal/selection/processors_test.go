package selection

import (
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func processorObject(name string, labels map[string]string) v1alpha1.Processor {
	return v1alpha1.Processor{ObjectMeta: meta(name, labels), Spec: v1alpha1.ProcessorSpec{Type: "event-strings"}}
}

func TestClustersUsingProcessor(t *testing.T) {
	late := map[string]string{"stage": "late"}
	withProcessors := func(o v1alpha1.Output, names ...string) v1alpha1.Output {
		o.Spec.EventProcessors = names
		return o
	}
	outputs := []v1alpha1.Output{withProcessors(output("kafka", nil), "own"), output("file", nil)}
	inputs := []v1alpha1.Input{input("bus", nil)}
	inputs[0].Spec.EventProcessors = []string{"in-own"}
	pipelines := []v1alpha1.Pipeline{
		pipeline("sends-kafka", v1alpha1.PipelineSpec{ClusterRef: "c1", Outputs: outputRefs("kafka")}),
		pipeline("refs", v1alpha1.PipelineSpec{ClusterRef: "c2",
			Outputs: &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"by-ref"}}}),
		pipeline("selects", v1alpha1.PipelineSpec{ClusterRef: "c3",
			Outputs: &v1alpha1.OutputSelection{OutputRefs: []string{"file"}},
			Inputs:  &v1alpha1.InputSelection{InputRefs: []string{"bus"}, ProcessorSelectors: match(late)}}),
		pipeline("off", v1alpha1.PipelineSpec{ClusterRef: "c4", Enabled: ptr(false),
			Outputs: &v1alpha1.OutputSelection{OutputRefs: []string{"kafka"}, ProcessorRefs: []string{"by-ref"}}}),
	}
	tests := []struct {
		name, processor string
		labels          map[string]string
		want            []string
	}{
		{"finds the clusters that send an output naming it", "own", nil, []string{"c1"}},
		{"finds the clusters that read an input naming it", "in-own", nil, []string{"c3"}},
		{"finds the cluster of a pipeline that references it", "by-ref", nil, []string{"c2"}},
		{"finds the cluster of a pipeline whose input processor selector matches it", "any", late, []string{"c3"}},
		{"finds none for a processor nobody names", "lonely", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClustersUsingProcessor(tt.processor, tt.labels, outputs, inputs, pipelines); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ClustersUsingProcessor(%s) = %v, want %v", tt.processor, got, tt.want)
			}
		})
	}
}

func TestResolveReportsAPipelinesMissingProcessorAndKeepsItInTheChain(t *testing.T) {
	in := namespace(pipeline("p1", v1alpha1.PipelineSpec{
		Outputs: &v1alpha1.OutputSelection{OutputRefs: []string{"kafka"}, ProcessorRefs: []string{"a", "gone"}},
		Inputs:  &v1alpha1.InputSelection{InputRefs: []string{"bus"}, ProcessorRefs: []string{"gone-too"}},
	}))
	in.Processors = []v1alpha1.Processor{processorObject("a", nil), processorObject("unused", nil)}
	sel := Resolve("c1", in)
	if got := sel.OutputProcessors["kafka"]; !reflect.DeepEqual(got, []string{"a", "gone"}) {
		t.Errorf("chain of kafka = %v, want [a gone]: a missing processor stays, so the output is not sent", got)
	}
	if got := sel.Inputs["bus"].Processors; !reflect.DeepEqual(got, []string{"gone-too"}) {
		t.Errorf("chain of bus = %v", got)
	}
	want := []string{`pipeline "p1": inputs.processorRef "gone-too" not found`, `pipeline "p1": outputs.processorRef "gone" not found`}
	if !reflect.DeepEqual(sel.Problems, want) {
		t.Errorf("problems = %q, want %q", sel.Problems, want)
	}
	if got := sortedKeys(sel.Processors); !reflect.DeepEqual(got, []string{"a"}) || sel.Counts().Processors != 1 {
		t.Errorf("selected processors = %v, want only a: the existing ones the chains name", got)
	}
}

func TestCombinedProcessors(t *testing.T) {
	p := processorObject("both", nil)
	p.Spec.Type = "event-combine"
	p.Spec.Config = map[string]apiextensionsv1.JSON{"processors": {Raw: []byte(`[{"name":"a","condition":".tags.x"},{"condition":"true"},{"name":7},"b",{"name":"c"}]`)}}
	if got := CombinedProcessors(&p); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("CombinedProcessors = %v, want [a c]", got)
	}
	p.Spec.Type = "event-strings"
	if got := CombinedProcessors(&p); got != nil {
		t.Errorf("a processor of another type runs none, got %v", got)
	}
}
