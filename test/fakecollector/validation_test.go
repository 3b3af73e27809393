package fakecollector

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestApplyRejectsInvalidBodiesWith400AndKeepsThePreviousConfig(t *testing.T) {
	target := good("r1", "a:1")
	tests := []struct {
		name      string
		body      string
		wantError string
	}{
		{"malformed JSON", `{"targets":`, "decode error"},
		{"empty body", ``, "decode error"},
		{"top-level array", `[]`, "decode error"},
		{"targets not an object", `{"targets":[],"subscriptions":{"s":{"name":"s"}}}`, "'targets': expected a map"},
		{"target not an object", `{"targets":{"r1":"x"},"subscriptions":{"s":{"name":"s"}}}`, "'targets[r1]': expected a map"},
		{"bool given as a string", config(map[string]string{"r1": target + `,"skip-verify":"yes"`}), "'targets[r1].skip-verify' expected type 'bool'"},
		{"duration that does not parse", config(map[string]string{"r1": `"address":"a:1","timeout":"ten seconds"`}), "'targets[r1].timeout'"},
		{"list given as a string", config(map[string]string{"r1": target + `,"subscriptions":"sub1"`}), "'targets[r1].subscriptions'"},
		{"list of numbers", config(map[string]string{"r1": target + `,"tags":[1]`}), "'targets[r1].tags[0]'"},
		{"subscription paths as a map", `{"subscriptions":{"s":{"paths":{"a":1}}}}`, "'subscriptions[s].paths'"},
		{"target without any subscription", `{"targets":{"r1":{` + target + `}}}`, "if targets are provided, at least one subscription is required"},
		{"input without an output", `{"inputs":{"i1":{"type":"nats"}}}`, "if inputs are provided, at least one output is required"},
		{"output not an object", `{"outputs":{"o1":true}}`, "'outputs[o1]': expected a map"},
		{"processor not an object", `{"processors":{"p1":"event-strings"}}`, "'processors[p1]': expected a map"},
		{"grpc keepalive not an object", config(map[string]string{"r1": target + `,"grpc-keepalive":"10s"`}),
			"'targets[r1].grpc-keepalive' expected a map, got 'string'"},
		{"grpc keepalive time as a bool", config(map[string]string{"r1": target + `,"grpc-keepalive":{"time":true}`}),
			"'targets[r1].grpc-keepalive.time' expected type 'time.Duration'"},
		{"grpc keepalive timeout that does not parse", config(map[string]string{"r1": target + `,"grpc-keepalive":{"timeout":"soon"}`}),
			"'targets[r1].grpc-keepalive.timeout'"},
		{"grpc keepalive permit-without-stream as a string", config(map[string]string{"r1": target + `,"grpc-keepalive":{"permit-without-stream":"yes"}`}),
			"'targets[r1].grpc-keepalive.permit-without-stream' expected type 'bool'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StartForTest(t)
			mustApply(t, c, config(map[string]string{"keep": good("keep", "k:1")}))

			a := apply(t, c, tt.body)
			if a.status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400 (body %q)", a.status, a.body)
			}
			if !strings.HasPrefix(a.contentType, "text/plain") {
				t.Errorf("Content-Type = %q, want text/plain like gNMIc", a.contentType)
			}
			errs := errorsOf(t, a)
			if len(errs) != 1 || !strings.Contains(errs[0], tt.wantError) {
				t.Errorf("errors = %q, want one containing %q", errs, tt.wantError)
			}
			if got := c.Targets(); !reflect.DeepEqual(got, []string{"keep"}) || c.ApplyCount() != 1 {
				t.Errorf("a rejected apply must change nothing: targets %v, %d applies", got, c.ApplyCount())
			}
		})
	}
}

func TestValidationErrorsNeverQuoteTheRejectedValue(t *testing.T) {
	c := StartForTest(t)
	a := apply(t, c, config(map[string]string{"r1": good("r1", "a:1") + `,"password":987654321`}))
	if a.status != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400", a.status)
	}
	if strings.Contains(a.body, "987654321") {
		t.Fatalf("error body quotes the password: %s", a.body)
	}
}

func TestApplyAcceptsADurationGivenInNanoseconds(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": `"name":"r1","address":"a:1","timeout":10000000000,"insecure":true`}))
	if s := status(t, c, "r1"); !s.Collecting() {
		t.Fatalf("a bare-number timeout is nanoseconds and valid, got %+v", s)
	}
}
