package render

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

func processor(name, typ, config string, labels map[string]string) v1alpha1.Processor {
	return v1alpha1.Processor{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: v1alpha1.ProcessorSpec{Type: typ, Config: rawJSON(config)}}
}

// processorNamespace holds processors a, b, c, d, m, x, y, z (m and c labelled stage=late, d labelled
// stage=input), outputs "file" and "kafka", and input "bus"; tune sets their own lists. Pipelines are for
// Cluster c1.
func processorNamespace(tune func(*selection.Objects), pipelines ...v1alpha1.Pipeline) selection.Objects {
	late, in := map[string]string{"stage": "late"}, map[string]string{"stage": "input"}
	objects := selection.Objects{
		Pipelines: pipelines,
		Outputs:   []v1alpha1.Output{*output("file", "file", `{"filename":"/tmp/out"}`), *output("kafka", "kafka", "")},
		Inputs:    []v1alpha1.Input{*input("bus", `{"address":"nats:4222"}`)},
	}
	for _, p := range []struct {
		name   string
		labels map[string]string
	}{{"a", nil}, {"b", nil}, {"c", late}, {"d", in}, {"m", late}, {"x", nil}, {"y", nil}, {"z", nil}} {
		objects.Processors = append(objects.Processors, processor(p.name, "event-strings", `{"value-names":[".*"]}`, p.labels))
	}
	if tune != nil {
		tune(&objects)
	}
	return objects
}

func pipelineOf(name string, outputs *v1alpha1.OutputSelection, inputs *v1alpha1.InputSelection) v1alpha1.Pipeline {
	return v1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.PipelineSpec{ClusterRef: "c1", Outputs: outputs, Inputs: inputs}}
}

func ownProcessors(output string, names ...string) func(*selection.Objects) {
	return func(o *selection.Objects) {
		for i := range o.Outputs {
			if o.Outputs[i].Name == output {
				o.Outputs[i].Spec.EventProcessors = names
			}
		}
	}
}

func eventProcessors(obj map[string]any) []string {
	if obj == nil {
		return nil
	}
	chain, _ := obj["event-processors"].([]string)
	return chain
}

func TestProcessorChainOrder(t *testing.T) {
	late := []metav1.LabelSelector{{MatchLabels: map[string]string{"stage": "late"}}}
	tests := []struct {
		name      string
		objects   selection.Objects
		wantFile  []string
		wantKafka []string
		wantBus   []string
	}{
		{
			name:     "applies the output's own processors in the order it lists them",
			objects:  processorNamespace(ownProcessors("file", "c", "a"), pipelineOf("p1", outputRefs("file"), nil)),
			wantFile: []string{"c", "a"},
		},
		{
			name: "appends a pipeline's processorRefs after the output's own, in their order",
			objects: processorNamespace(ownProcessors("file", "b"), pipelineOf("p1",
				&v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"d", "a"}}, nil)),
			wantFile: []string{"b", "d", "a"},
		},
		{
			name: "appends the processors a pipeline's selectors match after its refs, sorted by name",
			objects: processorNamespace(nil, pipelineOf("p1",
				&v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"z"}, ProcessorSelectors: late}, nil)),
			wantFile: []string{"z", "c", "m"},
		},
		{
			name: "takes the pipelines that select an output in their name order",
			objects: processorNamespace(nil,
				pipelineOf("p2", &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"x"}}, nil),
				pipelineOf("p1", &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"y"}}, nil)),
			wantFile: []string{"y", "x"},
		},
		{
			name: "keeps a processor named more than once at its first place",
			objects: processorNamespace(ownProcessors("file", "m"),
				pipelineOf("p1", &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"b", "m"}, ProcessorSelectors: late}, nil),
				pipelineOf("p2", &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"b", "a"}}, nil)),
			wantFile: []string{"m", "b", "c", "a"},
		},
		{
			name: "applies a pipeline's processors only to the outputs that pipeline selects",
			objects: processorNamespace(nil,
				pipelineOf("p1", &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"a"}}, nil),
				pipelineOf("p2", outputRefs("kafka"), nil)),
			wantFile: []string{"a"},
		},
		{
			name: "gives an input its own processors then its pipelines' input processors, not their output ones",
			objects: processorNamespace(func(o *selection.Objects) { o.Inputs[0].Spec.EventProcessors = []string{"b"} },
				pipelineOf("p1", &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"a"}},
					&v1alpha1.InputSelection{InputRefs: []string{"bus"}, ProcessorRefs: []string{"x"},
						ProcessorSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"stage": "input"}}}})),
			wantFile: []string{"a"},
			wantBus:  []string{"b", "x", "d"},
		},
		{
			name: "sends no event-processors when the chain is empty, even if config has one",
			objects: processorNamespace(func(o *selection.Objects) {
				o.Outputs[1].Spec.Config = rawJSON(`{"event-processors":["a"]}`)
			}, pipelineOf("p1", outputRefs("file", "kafka"), nil)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, skips, err := PodConfig(selection.Resolve("c1", tt.objects), nil, Connections{})
			if err != nil || len(skips) > 0 {
				t.Fatalf("PodConfig: %v, skips %v", err, skips)
			}
			for _, c := range []struct {
				what string
				obj  map[string]any
				want []string
			}{{"output file", cfg.Outputs["file"], tt.wantFile}, {"output kafka", cfg.Outputs["kafka"], tt.wantKafka},
				{"input bus", cfg.Inputs["bus"], tt.wantBus}} {
				if got := eventProcessors(c.obj); !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s: event-processors %v, want %v", c.what, got, c.want)
				}
				if _, has := c.obj["event-processors"]; has && len(c.want) == 0 {
					t.Errorf("%s: has an event-processors key with an empty chain", c.what)
				}
			}
			want := map[string]bool{}
			for _, chain := range [][]string{tt.wantFile, tt.wantKafka, tt.wantBus} {
				for _, n := range chain {
					want[n] = true
				}
			}
			if got := sortedKeys(cfg.Processors); !reflect.DeepEqual(got, sortedKeys(want)) && len(want)+len(got) > 0 {
				t.Errorf("processors sent %v, want exactly those the chains name %v", got, sortedKeys(want))
			}
		})
	}
}

func TestProcessorsAreSentAsTheirTypeAlone(t *testing.T) {
	objects := processorNamespace(func(o *selection.Objects) {
		o.Processors = append(o.Processors, processor("to-int", "event-convert", `{"value-names":["counter"],"type":"int"}`, nil))
	}, pipelineOf("p1", &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"to-int"}}, nil))
	cfg, _, err := PodConfig(selection.Resolve("c1", objects), nil, Connections{})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Processors["to-int"]
	settings, _ := got["event-convert"].(map[string]any)
	if len(got) != 1 || settings["type"] != "int" {
		t.Errorf("processor to-int sent as %v, want {event-convert: {..., type: int}} and nothing else", got)
	}
}

func TestAnOutputWhoseChainNamesAMissingProcessorIsNotSent(t *testing.T) {
	combine := func(steps string) func(*selection.Objects) {
		return func(o *selection.Objects) {
			o.Processors = append(o.Processors, processor("both", "event-combine", `{"processors":`+steps+`}`, nil))
		}
	}
	tests := []struct {
		name    string
		objects selection.Objects
		missing string
	}{
		{"its own list", processorNamespace(ownProcessors("file", "a", "gone"), pipelineOf("p1", outputRefs("file", "kafka"), nil)), `processor "gone"`},
		{"a pipeline's processorRefs", processorNamespace(nil,
			pipelineOf("p1", &v1alpha1.OutputSelection{OutputRefs: []string{"file"}, ProcessorRefs: []string{"a", "gone"}}, nil),
			pipelineOf("p2", outputRefs("kafka"), nil)), `processor "gone"`},
		{"an event-combine's processors", processorNamespace(func(o *selection.Objects) {
			combine(`[{"name":"a"},{"name":"gone"}]`)(o)
			ownProcessors("file", "both")(o)
		}, pipelineOf("p1", outputRefs("file", "kafka"), nil)), `processor "gone" (run by event-combine processor "both")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := selection.Resolve("c1", tt.objects)
			cfg, skips, err := PodConfig(sel, nil, Connections{})
			if err != nil {
				t.Fatal(err)
			}
			if _, sent := cfg.Outputs["file"]; sent {
				t.Errorf("output file sent with a missing processor: %v", cfg.Outputs["file"])
			}
			if _, sent := cfg.Outputs["kafka"]; !sent {
				t.Error("output kafka, whose chain resolves, was not sent")
			}
			if len(skips) != 1 || skips[0].Name != "file" || !errors.Is(skips[0], ErrProcessorNotFound) {
				t.Fatalf("skips %v, want output file for a missing processor", skips)
			}
			if msg := skips[0].Error(); !strings.Contains(msg, tt.missing) {
				t.Errorf("skip %q does not name %s", msg, tt.missing)
			}
			if len(cfg.Processors) > 0 && len(sel.OutputProcessors["kafka"]) == 0 {
				t.Errorf("processors %v sent for an output that is not", sortedKeys(cfg.Processors))
			}
		})
	}
}

func TestAnEventCombineIsSentWithTheProcessorsItRuns(t *testing.T) {
	objects := processorNamespace(func(o *selection.Objects) {
		o.Processors = append(o.Processors, processor("both", "event-combine", `{"processors":[{"name":"a"},{"name":"x","condition":".tags.x"}]}`, nil))
		ownProcessors("file", "both")(o)
	}, pipelineOf("p1", outputRefs("file"), nil))
	cfg, skips, err := PodConfig(selection.Resolve("c1", objects), nil, Connections{})
	if err != nil || len(skips) > 0 {
		t.Fatalf("PodConfig: %v, skips %v", err, skips)
	}
	if got := sortedKeys(cfg.Processors); !reflect.DeepEqual(got, []string{"a", "both", "x"}) {
		t.Errorf("processors sent %v, want both and the two it runs", got)
	}
	if got := eventProcessors(cfg.Outputs["file"]); !reflect.DeepEqual(got, []string{"both"}) {
		t.Errorf("event-processors %v, want [both]", got)
	}
}

func outputRefs(names ...string) *v1alpha1.OutputSelection {
	return &v1alpha1.OutputSelection{OutputRefs: names}
}

func TestCheckProcessorRefusesWhatTheCollectorFailsOn(t *testing.T) {
	tests := []struct {
		name, typ, config string
		valid             bool
	}{
		{"settings of the type", "event-strings", `{"value-names":[".*"]}`, true},
		{"event-convert's own type key", "event-convert", `{"value-names":["x"],"type":"int"}`, true},
		{"no config", "event-merge", ``, true},
		{"the configuration file's form under config", "event-strings", `{"event-strings":{"value-names":[".*"]}}`, false},
		{"starlark with a script", "event-starlark", `{"script":"/scripts/a.star"}`, true},
		{"starlark with neither script nor source", "event-starlark", `{"debug":true}`, false},
		{"starlark with both", "event-starlark", `{"script":"a.star","source":"def apply(*e): return e"}`, false},
		{"combine with its processors", "event-combine", `{"processors":[{"name":"a"}]}`, true},
		{"combine without processors", "event-combine", `{"debug":true}`, false},
		{"combine whose processors have no name", "event-combine", `{"processors":[{"condition":"true"}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := processor("p", tt.typ, tt.config, nil)
			err := CheckProcessor(&p)
			if (err == nil) != tt.valid {
				t.Errorf("CheckProcessor = %v, want valid %v", err, tt.valid)
			}
			if err != nil && !errors.Is(err, ErrInvalidProcessor) {
				t.Errorf("error %v does not wrap ErrInvalidProcessor", err)
			}
		})
	}
	objects := processorNamespace(func(o *selection.Objects) {
		o.Processors = append(o.Processors, processor("bad", "event-starlark", `{}`, nil))
		ownProcessors("file", "a", "bad")(o)
	}, pipelineOf("p1", outputRefs("file", "kafka"), nil))
	cfg, skips, _ := PodConfig(selection.Resolve("c1", objects), nil, Connections{})
	if _, sent := cfg.Outputs["file"]; sent || len(skips) != 1 || !errors.Is(skips[0], ErrInvalidProcessor) {
		t.Errorf("an output applying an invalid processor must be left out: sent %v, skips %v", sent, skips)
	}
}

// A target is validated on its own with the outputs it sends to: the processors those outputs apply must be
// part of that check, or every target sending to an output with processors would be left out.
func TestATargetSendingToAnOutputWithProcessorsRenders(t *testing.T) {
	f := newFixture()
	f.picks["r1"] = selectionTarget([]string{"counters"}, []string{"file"})
	sel := f.selection()
	tag := processor("tag", "event-add-tag", `{"add":{"dc":"dc1"}}`, nil)
	sel.Processors = map[string]*v1alpha1.Processor{"tag": &tag}
	sel.OutputProcessors = map[string][]string{"file": {"tag"}}
	cfg, skips, err := PodConfig(sel, []string{"r1", "r2"}, f.conn)
	if err != nil || len(skips) > 0 {
		t.Fatalf("PodConfig: %v, skips %v", err, skips)
	}
	if got := cfg.TargetNames(); !reflect.DeepEqual(got, []string{"r1", "r2"}) {
		t.Errorf("targets %v, want r1 and r2", got)
	}
	if got := eventProcessors(cfg.Outputs["file"]); !reflect.DeepEqual(got, []string{"tag"}) {
		t.Errorf("event-processors %v", got)
	}
}
