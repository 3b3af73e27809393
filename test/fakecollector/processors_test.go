package fakecollector

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// withProcessors is an apply body: target r1 sending to output "file", which applies chain, and processors
// (name -> JSON object).
func withProcessors(chain string, processors string) string {
	return `{"subscriptions":{"sub1":{"name":"sub1","paths":["/interfaces"]}},` +
		`"targets":{"r1":{` + good("r1", "a:1") + `}},` +
		`"outputs":{"file":{"name":"file","type":"file","event-processors":` + chain + `}},` +
		`"processors":{` + processors + `}}`
}

const trimAndTag = `"trim":{"event-strings":{"value-names":[".*"]}},"tag":{"event-add-tag":{"add":{"dc":"dc1"}}}`

func TestAppliedProcessorsReadInTheirOrderAndStoredAsSent(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, withProcessors(`["tag","trim"]`, trimAndTag))
	last, _ := c.LastApplied()
	if got := last.Config.EventProcessors("outputs", "file"); !reflect.DeepEqual(got, []string{"tag", "trim"}) {
		t.Errorf("event-processors = %v, want [tag trim] as sent", got)
	}
	if got := last.Config.ProcessorType("trim"); got != "event-strings" {
		t.Errorf("type of trim = %q", got)
	}
	a := call(t, http.MethodGet, c.URL()+"/api/v1/config/processors", "")
	if a.status != http.StatusOK || !strings.Contains(a.body, `"event-strings"`) {
		t.Fatalf("GET /api/v1/config/processors: %d %s", a.status, a.body)
	}
	if strings.Contains(a.body, `"name"`) {
		t.Errorf("processors are stored as sent, {type: config}, without a name: %s", a.body)
	}
	if err := last.Config.InitError("outputs", "file"); err != nil {
		t.Errorf("InitError = %v, want nil for registered types", err)
	}
}

// The collector's apply does not look inside a processor: an unknown type, a processor an output names but
// nobody sent, a processor with a second key are answered 200 and stored; the output fails when it is
// initialised, which InitError says in the collector's words.
func TestApplyAcceptsProcessorsTheOutputsCannotInitialise(t *testing.T) {
	tests := []struct {
		name, chain, processors, wantInit string
	}{
		{"unknown type", `["x"]`, `"x":{"event-frobnicate":{}}`, `"x" event processor has an unknown type="event-frobnicate"`},
		{"processor not sent", `["trim","gone"]`, trimAndTag, `"gone" event processor not found`},
		{"a name beside the type", `["x"]`, `"x":{"event-strings":{},"name":"x"}`, `"x" event processor has an unknown type="name"`},
		{"event-combine running a processor not sent", `["both"]`, `"both":{"event-combine":{"processors":[{"name":"gone"}]}}`,
			`"gone" event processor not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StartForTest(t)
			if a := apply(t, c, withProcessors(tt.chain, tt.processors)); a.status != http.StatusOK {
				t.Fatalf("status %d %s, want 200: the apply does not validate processors", a.status, a.body)
			}
			last, _ := c.LastApplied()
			err := last.Config.InitError("outputs", "file")
			if err == nil || !strings.Contains(err.Error(), tt.wantInit) {
				t.Errorf("InitError = %v, want %q", err, tt.wantInit)
			}
		})
	}
}

func TestAProcessorChangeRestartsNoTarget(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, withProcessors(`["tag","trim"]`, trimAndTag))
	before := c.Counts("r1")
	changes := mustApply(t, c, withProcessors(`["tag","trim"]`,
		`"trim":{"event-strings":{"value-names":["^in-"]}},"tag":{"event-add-tag":{"add":{"dc":"dc1"}}}`))
	if !reflect.DeepEqual(changes.Processors.Changed, []string{"trim"}) || !changes.Targets.Empty() || !changes.Outputs.Empty() {
		t.Errorf("changes = %+v, want processor trim changed and nothing else", changes)
	}
	if after := c.Counts("r1"); after != before {
		t.Errorf("target r1 counts %+v -> %+v: a processor change touches no target", before, after)
	}
}

func TestAnOutputWhoseProcessorsCannotInitialiseFailsToStart(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, withProcessors(`["tag","gone"]`, trimAndTag))
	st := c.OutputStates()["file"]
	if st.State != componentFailed || st.FailedReason != `"gone" event processor not found` {
		t.Errorf("output file state %+v, want failed for the missing processor", st)
	}
	if got := c.Targets(); !reflect.DeepEqual(got, []string{"r1"}) {
		t.Errorf("targets %v: they keep running when an output fails", got)
	}
	mustApply(t, c, withProcessors(`["tag","trim"]`, trimAndTag))
	if st := c.OutputStates()["file"]; st.State != componentRunning {
		t.Errorf("output file state %+v after its chain was fixed, want running", st)
	}
}

func TestAProcessorWhoseInitialisationFailsFailsTheOutputThatAppliesIt(t *testing.T) {
	c := StartForTest(t)
	c.FailProcessorSetting("expression", ".bad[", "jq: error: unexpected end of input")
	mustApply(t, c, withProcessors(`["jq"]`, `"jq":{"event-jq":{"expression":".bad["}}`))
	want := "failed initializing event processor 'jq' of type='event-jq': jq: error: unexpected end of input"
	if got := c.OutputStates()["file"]; got.State != componentFailed || got.FailedReason != want {
		t.Fatalf("output state = %+v, want failed with %q", got, want)
	}
	if st, ok := c.TargetStatus("r1"); !ok || !st.Collecting() {
		t.Fatal("the target must keep running beside the failed output")
	}
	// A processor change alone does not start the failed output: gNMIc updates running outputs only.
	mustApply(t, c, withProcessors(`["jq"]`, `"jq":{"event-jq":{"expression":".good"}}`))
	if got := c.OutputStates()["file"].State; got != componentFailed {
		t.Fatalf("after a processor change the output is %s, want still failed", got)
	}
	// Taking the processor out changes the output, which starts.
	mustApply(t, c, withProcessors(`[]`, `"jq":{"event-jq":{"expression":".good"}}`))
	if got := c.OutputStates()["file"].State; got != componentRunning {
		t.Fatalf("after the output's change it is %s, want running", got)
	}
}
