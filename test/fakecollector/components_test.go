package fakecollector

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// withOutputs is a configuration of one collecting target "a" sending to the given outputs (JSON objects by
// name).
func withOutputs(outputs string) string {
	cfg := config(map[string]string{"a": good("a", "a:1")})
	return strings.TrimSuffix(cfg, "}") + `,"outputs":{` + outputs + `}}`
}

func componentOf(t *testing.T, ev event) ComponentState {
	t.Helper()
	raw, _ := json.Marshal(ev.Object)
	var s ComponentState
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Measured against the real collector: an apply whose output cannot start is answered 200 and stored, the
// output's state is failed with the collector's reason, and the targets keep running.
func TestAnOutputThatCannotStartIsAcceptedThenFailsWithItsReason(t *testing.T) {
	cases := []struct {
		name, output, reason string
	}{
		{"file with format proto", `"type":"file","filename":"/out","format":"proto"`,
			"proto format not supported in output type 'file'"},
		{"unknown type", `"type":"carrier-pigeon"`, "unknown output type: carrier-pigeon"},
		{"prometheus listening on no address", `"type":"prometheus","listen":"::9804"`,
			"listen tcp: address ::9804: too many colons in address"},
		{"gnmi on a port out of range", `"type":"gnmi","address":":70000"`, "listen tcp: address 70000: invalid port"},
		{"prometheus listen of the wrong type", `"type":"prometheus","listen":9804`,
			"1 error(s) decoding:\n\n* 'listen' expected type 'string', got unconvertible type 'float64'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := StartForTest(t)
			a := apply(t, c, withOutputs(`"good":{"type":"file","filename":"/ok"},"bad":{`+tc.output+`}`))
			if a.status != http.StatusOK {
				t.Fatalf("apply = %d %s, want 200: the collector stores what it cannot start", a.status, a.body)
			}
			states := c.OutputStates()
			if got := states["bad"]; got.State != componentFailed || got.FailedReason != tc.reason || got.IntendedState != "enabled" {
				t.Fatalf("bad output state = %+v, want failed with %q", got, tc.reason)
			}
			if got := states["good"]; got.State != componentRunning || got.FailedReason != "" {
				t.Fatalf("good output state = %+v, want running", got)
			}
			if st, ok := c.TargetStatus("a"); !ok || !st.Collecting() {
				t.Fatal("the target must keep running beside an output that failed")
			}
		})
	}
}

func TestAFailedOutputStartsOnceItIsFixedAndItsStateGoesWithIt(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, withOutputs(`"out":{"name":"out","type":"file","filename":"/out","format":"proto"}`))
	s := openStream(t, c.URL()+"/api/v1/sse/outputs?store=state")
	ev := s.next(t)
	if ev.EventType != eventCreate || ev.Name != "out" || ev.Store != storeState || ev.Kind != kindOutputs ||
		componentOf(t, ev).State != componentFailed {
		t.Fatalf("initial event = %+v, want the create of failed output out", ev)
	}

	// The same configuration again raises no event: the output stays failed.
	mustApply(t, c, withOutputs(`"out":{"name":"out","type":"file","filename":"/out","format":"proto"}`))
	if got := c.OutputStates()["out"].State; got != componentFailed {
		t.Fatalf("after an identical apply the output is %s, want still failed", got)
	}

	mustApply(t, c, withOutputs(`"out":{"name":"out","type":"file","filename":"/out","format":"json"}`))
	ev = s.next(t)
	if st := componentOf(t, ev); ev.EventType != eventUpdate || st.State != componentRunning || st.FailedReason != "" {
		t.Fatalf("event after the fix = %s %+v, want an update to running", ev.EventType, st)
	}

	mustApply(t, c, config(map[string]string{"a": good("a", "a:1")}))
	if ev := s.next(t); ev.EventType != eventDelete || ev.Name != "out" {
		t.Fatalf("event after the output's removal = %+v, want its delete", ev)
	}
	if got := c.OutputStates(); len(got) != 0 {
		t.Fatalf("output states after the removal = %v, want none", got)
	}
}

func TestFailOutputSettingFailsMatchingOutputsUntilCleared(t *testing.T) {
	c := StartForTest(t)
	c.FailOutputSetting("brokers", "kafka:9092", "kafka: client has run out of available brokers")
	mustApply(t, c, withOutputs(`"k":{"type":"kafka","brokers":"kafka:9092"},"other":{"type":"kafka","brokers":"k2:9092"}`))
	want := map[string]string{"k": componentFailed, "other": componentRunning}
	for name, state := range c.OutputStates() {
		if state.State != want[name] {
			t.Fatalf("output %s is %s, want %s", name, state.State, want[name])
		}
	}
	if got := c.OutputStates()["k"].FailedReason; got != "kafka: client has run out of available brokers" {
		t.Fatalf("reason = %q", got)
	}
	c.ClearOutputFailures()
	mustApply(t, c, withOutputs(`"k":{"type":"kafka","brokers":"kafka:9092","topic":"t"},"other":{"type":"kafka","brokers":"k2:9092"}`))
	if got := c.OutputStates()["k"].State; got != componentRunning {
		t.Fatalf("after the fix and the change, k is %s, want running", got)
	}
}

func TestAnInputOfAnUnknownTypeFailsAndTheInputsStreamSaysSo(t *testing.T) {
	c := StartForTest(t)
	body := withOutputs(`"out":{"type":"file","filename":"/out"}`)
	body = strings.TrimSuffix(body, "}") + `,"inputs":{"in":{"type":"mqtt"},"k":{"type":"kafka"}}}`
	mustApply(t, c, body)
	got := map[string]string{}
	for name, st := range c.InputStates() {
		got[name] = st.State + " " + st.FailedReason
	}
	if want := map[string]string{"in": "failed unknown input type: mqtt", "k": "running "}; !reflect.DeepEqual(got, want) {
		t.Fatalf("input states = %v, want %v", got, want)
	}
	s := openStream(t, c.URL()+"/api/v1/sse/inputs?store=state")
	for _, name := range []string{"in", "k"} {
		if ev := s.next(t); ev.Name != name || ev.Kind != kindInputs || ev.EventType != eventCreate {
			t.Fatalf("initial event = %+v, want the create of input %s", ev, name)
		}
	}
}

// Only what cannot be decoded is refused with 400: an output value that is not an object.
func TestOnlyAnOutputThatIsNotAnObjectIsRefused(t *testing.T) {
	c := StartForTest(t)
	a := apply(t, c, withOutputs(`"out":"file"`))
	if a.status != http.StatusBadRequest {
		t.Fatalf("apply = %d, want 400", a.status)
	}
	if got, want := errorsOf(t, a), []string{"decode error: 'outputs[out]': expected a map, got 'string'"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("errors = %q, want %q", got, want)
	}
	if c.ApplyCount() != 0 || len(c.OutputStates()) != 0 {
		t.Fatal("a refused apply must change nothing")
	}
}
