package gnmic_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

func TestResponseCountsSumTheCollectorsCountersPerTargetOverItsSubscriptions(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	collector := fakecollector.StartForTest(t, fakecollector.WithClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}))
	client := newClient(t, collector.URL())
	ctx := testContext(t)
	config := twoRouters()
	config.Subscriptions["bgp"] = config.Subscriptions["if"]
	r1 := config.Targets["ns/r1"]
	r1.Subscriptions = []string{"bgp", "if"}
	config.Targets["ns/r1"] = r1
	if err := client.Apply(ctx, config); err != nil {
		t.Fatal(err)
	}
	collector.SetResponseRates(map[string]float64{"ns/r1": 2000, "ns/r2": 3})
	mu.Lock()
	now = now.Add(1000 * time.Second)
	mu.Unlock()

	got, err := client.ResponseCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{"ns/r1": 2e6, "ns/r2": 3000}; !reflect.DeepEqual(got, want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
}

// exposition is a /metrics answer shaped like gNMIc's: other families around the counter, label values
// with escapes, a timestamp.
const exposition = `# HELP go_gc_duration_seconds A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 2.1e-05
# HELP gnmic_targets_subscribe_response_received_count Number of subscribe responses received
# TYPE gnmic_targets_subscribe_response_received_count counter
gnmic_targets_subscribe_response_received_count{subscription="a,b}",target="ns/r\"1"} 10
gnmic_targets_subscribe_response_received_count{subscription="c",target="ns/r\"1"} 1.5e+06 1732700000000
gnmic_targets_subscribe_response_received_count{subscription="c",target="back\\slash\nline"} 7
gnmic_targets_subscribe_response_received_count_other{target="x"} 99
# HELP gnmic_targets_dropped_subscribe_responses_count Number of dropped subscribe responses
# TYPE gnmic_targets_dropped_subscribe_responses_count counter
gnmic_targets_dropped_subscribe_responses_count{subscription="c",target="ns/r\"1"} 4
process_cpu_seconds_total 12.5
`

func TestResponseCountsReadTheTextFormatWithItsEscapes(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, exposition)
	}))
	t.Cleanup(server.Close)
	got, err := newClient(t, server.URL).ResponseCounts(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{`ns/r"1`: 1.5e6 + 10, "back\\slash\nline": 7}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("counts %#v, want %#v", got, want)
	}
}

func TestResponseCountsRefuseMalformedCounterLinesAndErrorAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"no target label", 200, `gnmic_targets_subscribe_response_received_count{subscription="a"} 1` + "\n"},
		{"unterminated label", 200, `gnmic_targets_subscribe_response_received_count{target="a} 1` + "\n"},
		{"no value", 200, `gnmic_targets_subscribe_response_received_count{target="a"}` + "\n"},
		{"a value that is no number", 200, `gnmic_targets_subscribe_response_received_count{target="a"} many` + "\n"},
		{"an error answer", 500, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			t.Cleanup(server.Close)
			if got, err := newClient(t, server.URL).ResponseCounts(testContext(t)); err == nil {
				t.Fatalf("read %v, want an error", got)
			}
		})
	}
}
