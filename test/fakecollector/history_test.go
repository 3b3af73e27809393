package fakecollector

import (
	"net/http"
	"reflect"
	"testing"
)

func TestAnyHistoryTimeRefusesTheWholeApply(t *testing.T) {
	tests := []struct {
		name    string
		history string
		// stream puts the history in a stream subscription of sub1.
		stream    bool
		wantError string
	}{
		{"a snapshot in RFC 3339", `{"snapshot":"2026-01-01T00:00:00Z"}`, false,
			"'subscriptions[sub1].history.snapshot' expected a map, got 'string'"},
		{"a range in RFC 3339", `{"start":"2026-01-01T00:00:00Z","end":"2026-01-02T00:00:00Z"}`, false,
			"'subscriptions[sub1].history.start' expected a map, got 'string'"},
		{"an end alone", `{"end":"2026-01-02T00:00:00Z"}`, false,
			"'subscriptions[sub1].history.end' expected a map, got 'string'"},
		{"a snapshot in nanoseconds", `{"snapshot":1767225600000000000}`, false,
			"'subscriptions[sub1].history.snapshot' expected a map, got 'float64'"},
		{"a history given as a string", `"2026-01-01T00:00:00Z"`, false,
			"'subscriptions[sub1].history' expected a map, got 'string'"},
		{"a snapshot in a stream subscription", `{"snapshot":"2026-01-01T00:00:00Z"}`, true,
			"'subscriptions[sub1].stream-subscriptions[0].history.snapshot' expected a map, got 'string'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StartForTest(t)
			mustApply(t, c, config(map[string]string{"keep": good("keep", "k:1")}))

			sub := `"name":"sub1","paths":["/a"],"history":` + tt.history
			if tt.stream {
				sub = `"name":"sub1","stream-subscriptions":[{"paths":["/a"],"history":` + tt.history + `}]`
			}
			body := `{"subscriptions":{"sub1":{` + sub + `},"sub2":{"name":"sub2"}},` +
				`"targets":{"r1":{` + good("r1", "a:1") + `}}}`
			a := apply(t, c, body)
			if a.status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400", a.status)
			}
			if got := errorsOf(t, a); !reflect.DeepEqual(got, []string{"decode error: " + tt.wantError}) {
				t.Fatalf("errors = %q, want exactly [decode error: %s]", got, tt.wantError)
			}
			if got := c.ConfiguredTargets(); !reflect.DeepEqual(got, []string{"keep"}) || c.ApplyCount() != 1 {
				t.Fatalf("nothing of a refused apply may be stored: targets %v, %d applies", got, c.ApplyCount())
			}
			subs := call(t, http.MethodGet, c.URL()+"/api/v1/config/subscriptions", "")
			if subs.body != `{"sub1":{"name":"sub1","paths":["/interfaces"]}}`+"\n" {
				t.Fatalf("subscriptions after a refused apply = %s, want the previous sub1 only", subs.body)
			}
		})
	}
}

func TestAHistoryThatHoldsNoTimeIsAcceptedAsGNMIcDecodesIt(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, `{"subscriptions":{"sub1":{"name":"sub1","history":{}}},"targets":{"r1":{`+good("r1", "a:1")+`}}}`)
	if s := status(t, c, "r1"); !s.Collecting() {
		t.Fatalf("status = %+v, want collecting", s)
	}
}
