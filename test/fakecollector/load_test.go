package fakecollector

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// manualClock is a clock the test advances.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
}

func (m *manualClock) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *manualClock) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
}

func metricsBody(t *testing.T, c *Collector) string {
	t.Helper()
	a := call(t, http.MethodGet, c.URL()+"/metrics", "")
	if a.status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", a.status, a.body)
	}
	return a.body
}

func requireLines(t *testing.T, body string, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("metrics lack %q:\n%s", line, body)
		}
	}
}

// The names, label names, label order and types below are gNMIc's (pkg/collector/managers/targets/metrics.go
// at 597750387b51: CounterVec "gnmic_targets_subscribe_response_received_count" with labels target and
// subscription, which client_golang writes in name order; process_cpu_seconds_total from its API server's
// process collector).
func TestMetricsCountSubscribeResponsesPerTargetAndSubscriptionAsGNMIcNamesThem(t *testing.T) {
	clock := newManualClock()
	c := StartForTest(t, WithClock(clock.Now))
	mustApply(t, c, `{"subscriptions":{"a":{"name":"a","paths":["/x"]},"b":{"name":"b","paths":["/y"]}},`+
		`"targets":{"ns/r1":{`+good("ns/r1", "a:1")+`},"ns/r2":{`+good("ns/r2", "b:1")+`,"subscriptions":["a"]}}}`)
	c.SetResponseRates(map[string]float64{"ns/r1": 10, "ns/r2": 3})
	clock.Advance(100 * time.Second)

	requireLines(t, metricsBody(t, c),
		"# TYPE gnmic_targets_subscribe_response_received_count counter",
		`gnmic_targets_subscribe_response_received_count{subscription="a",target="ns/r1"} 500`,
		`gnmic_targets_subscribe_response_received_count{subscription="a",target="ns/r2"} 300`,
		`gnmic_targets_subscribe_response_received_count{subscription="b",target="ns/r1"} 500`,
		"# TYPE process_cpu_seconds_total counter",
	)
}

func TestMetricsHaveNoResponseSeriesBeforeTheFirstResponse(t *testing.T) {
	clock := newManualClock()
	c := StartForTest(t, WithClock(clock.Now))
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	clock.Advance(time.Hour)
	body := metricsBody(t, c)
	if strings.Contains(body, "gnmic_targets_subscribe_response_received_count") ||
		strings.Contains(body, "gnmic_targets_dropped_subscribe_responses_count") {
		t.Fatalf("a target without a response rate has response series:\n%s", body)
	}
}

func TestResponseCountersWriteLargeValuesAsClientGolangDoes(t *testing.T) {
	clock := newManualClock()
	c := StartForTest(t, WithClock(clock.Now))
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	c.SetResponseRate("r1", 1234.567)
	clock.Advance(1000 * time.Second)
	requireLines(t, metricsBody(t, c), `gnmic_targets_subscribe_response_received_count{subscription="sub1",target="r1"} 1.234567e+06`)
}

func TestResponsesCountOnlyWhileTheTargetCollects(t *testing.T) {
	clock := newManualClock()
	c := StartForTest(t, WithClock(clock.Now))
	c.SetResponseRate("r1", 2)
	c.FailStart("r1", "device refused")
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	clock.Advance(time.Minute)
	if got, _ := c.ResponseCounts("r1"); got != 0 {
		t.Fatalf("a failed target received %v responses", got)
	}

	call(t, http.MethodPost, c.URL()+"/api/v1/targets/r1/state/enabled", "")
	clock.Advance(time.Minute)
	c.EndSubscription("r1", "sub1", "EOF")
	clock.Advance(time.Minute)
	c.ResumeSubscription("r1", "sub1")
	clock.Advance(time.Minute)
	c.SetConnectionState("r1", ConnectionTransientFailure)
	clock.Advance(time.Minute)
	if got, _ := c.ResponseCounts("r1"); got != 240 {
		t.Fatalf("received %v responses, want 240: two collecting minutes at 2/s", got)
	}
}

func TestAStaleSubscriptionShowsStoppedWhileItsResponsesKeepCounting(t *testing.T) {
	clock := newManualClock()
	c := StartForTest(t, WithClock(clock.Now))
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	c.SetResponseRate("r1", 5)
	c.StaleSubscription("r1", "sub1")
	clock.Advance(10 * time.Second)

	status, _ := c.TargetStatus("r1")
	if status.State != StateRunning || status.ConnectionState != ConnectionReady ||
		status.Subscriptions["sub1"] != SubscriptionStopped || status.Collecting() {
		t.Fatalf("status %+v, want running, READY, sub1 stopped", status)
	}
	requireLines(t, metricsBody(t, c), `gnmic_targets_subscribe_response_received_count{subscription="sub1",target="r1"} 50`)

	c.ClearStaleSubscription("r1", "sub1")
	if status, _ := c.TargetStatus("r1"); !status.Collecting() {
		t.Fatalf("status %+v after clearing, want collecting", status)
	}
}

func TestARemovedTargetKeepsItsCountersAndCountsOnWhenAppliedAgain(t *testing.T) {
	clock := newManualClock()
	c := StartForTest(t, WithClock(clock.Now))
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	c.SetResponseRate("r1", 1)
	clock.Advance(30 * time.Second)
	mustApply(t, c, `{}`)
	clock.Advance(time.Hour)
	requireLines(t, metricsBody(t, c), `gnmic_targets_subscribe_response_received_count{subscription="sub1",target="r1"} 30`)

	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	clock.Advance(15 * time.Second)
	requireLines(t, metricsBody(t, c), `gnmic_targets_subscribe_response_received_count{subscription="sub1",target="r1"} 45`)
}

func TestAPodAboveItsResponseCapacityDropsTheExcessAndBurnsAFullCore(t *testing.T) {
	clock := newManualClock()
	c := StartForTest(t, WithClock(clock.Now), WithResponseCapacity(100))
	mustApply(t, c, config(map[string]string{"cool": good("cool", "a:1"), "hot": good("hot", "b:1")}))
	c.SetResponseRates(map[string]float64{"cool": 20, "hot": 30})
	clock.Advance(10 * time.Second)
	if load := c.Load(); load.Saturated() || load.Offered != 50 || math.Abs(load.CPUSeconds-5) > 1e-9 {
		t.Fatalf("below capacity: %+v, want 50/s offered, half a core for 10 s", load)
	}
	if _, dropped := c.ResponseCounts("hot"); dropped != 0 {
		t.Fatalf("dropped %v below capacity", dropped)
	}

	c.SetResponseRate("hot", 180) // 200/s offered, twice the capacity: half of every target's responses dropped
	clock.Advance(10 * time.Second)
	load := c.Load()
	if !load.Saturated() || math.Abs(load.CPUSeconds-15) > 1e-9 {
		t.Fatalf("above capacity: %+v, want saturated, a full core for the last 10 s", load)
	}
	received, dropped := c.ResponseCounts("hot")
	if received != 300+1800 || dropped != 900 {
		t.Fatalf("hot received %v dropped %v, want 2100 and 900", received, dropped)
	}
	requireLines(t, metricsBody(t, c),
		"# TYPE gnmic_targets_dropped_subscribe_responses_count counter",
		`gnmic_targets_dropped_subscribe_responses_count{subscription="sub1",target="cool"} 100`,
		`gnmic_targets_dropped_subscribe_responses_count{subscription="sub1",target="hot"} 900`,
		"process_cpu_seconds_total 15",
	)
}

func TestParetoRatesAreHeavyTailedCappedAndRepeatable(t *testing.T) {
	rates := ParetoRates(10_000, 1.2, 2, 64, 7)
	if !slices.Equal(rates, ParetoRates(10_000, 1.2, 2, 64, 7)) {
		t.Fatal("the same seed gave other rates")
	}
	sorted := slices.Sorted(slices.Values(rates))
	median, top := sorted[len(sorted)/2], sorted[len(sorted)-1]
	if sorted[0] < 2 || top > 128 {
		t.Fatalf("rates span [%v, %v], want within [2, 128]", sorted[0], top)
	}
	// Pareto(1.2): the median ratio is 2^(1/1.2) = 1.78; P(ratio >= 64) = 64^-1.2 = 0.7 %.
	if math.Abs(median/2-1.78) > 0.1 {
		t.Errorf("median ratio %v, want about 1.78", median/2)
	}
	capped := len(sorted) - slices.Index(sorted, top)
	if capped < 40 || capped > 110 {
		t.Errorf("%d rates at the cap, want about 70", capped)
	}
}
