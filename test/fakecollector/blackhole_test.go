package fakecollector

import (
	"net/http"
	"testing"
	"time"
)

func TestADeleteQueuedBehindABlackholedStartWaitsForTheBlackholeTime(t *testing.T) {
	const hole = 500 * time.Millisecond
	c := StartForTest(t, Realistic())
	r1 := map[string]string{"r1": good("r1", "a:1")}
	mustApply(t, c, config(r1))
	waitIdle(t, c)
	s := openStream(t, c.URL()+"/api/v1/sse/targets?store=state")
	if ev := s.next(t); ev.Name != "r1" || ev.EventType != eventCreate {
		t.Fatalf("initial event = %s %s, want the create of r1", ev.EventType, ev.Name)
	}

	c.Blackhole("bh", hole)
	bh := map[string]string{"bh": good("bh", "h:1")}
	begin := time.Now()
	mustApply(t, c, config(union(r1, bh)))
	mustApply(t, c, config(bh))

	if got := c.ConfiguredTargets(); len(got) != 1 || got[0] != "bh" {
		t.Fatalf("configured = %v, want only bh: r1 is removed from the config at once", got)
	}
	views := targetViews(t, call(t, http.MethodGet, c.URL()+"/api/v1/targets/r1", ""))
	if len(views) != 1 || !views[0].State.Collecting() {
		t.Fatalf("r1 must still be listed and collecting while its delete waits, got %+v", views)
	}
	if s := status(t, c, "bh"); s.State != StateStarting || s.ConnectionState != ConnectionConnecting {
		t.Fatalf("bh while it holds the worker = %+v, want starting and CONNECTING", s)
	}

	want := []struct{ eventType, name, state string }{
		{eventCreate, "bh", StateStarting},
		{eventUpdate, "bh", StateFailed},
		{eventDelete, "r1", StateRunning},
	}
	for _, w := range want {
		ev := s.next(t)
		if ev.EventType != w.eventType || ev.Name != w.name || stateOf(t, ev).State != w.state {
			t.Fatalf("event = %s %s %s, want %s %s %s", ev.EventType, ev.Name, stateOf(t, ev).State, w.eventType, w.name, w.state)
		}
		if ev.Name == "r1" && ev.Timestamp.Sub(begin) < hole {
			t.Fatalf("r1's delete was published %v after the apply, before the blackhole time %v", ev.Timestamp.Sub(begin), hole)
		}
	}
	if a := call(t, http.MethodGet, c.URL()+"/api/v1/targets/r1", ""); a.status != http.StatusNotFound {
		t.Fatalf("GET /api/v1/targets/r1 after its delete = %d, want 404", a.status)
	}
}

func TestABlackholedTargetStartsForTheBlackholeTimeThenFailsUnreachable(t *testing.T) {
	const hole = 300 * time.Millisecond
	tests := []struct {
		name string
		opts []Option
		// holdsOthers is whether a target applied behind the blackholed
		// start waits for it.
		holdsOthers bool
	}{
		{"with the change queue, others wait behind it", []Option{Realistic()}, true},
		{"without a change queue, only the target itself waits", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StartForTest(t, tt.opts...)
			c.Blackhole("bh", hole)
			bh := map[string]string{"bh": good("bh", "h:1")}
			mustApply(t, c, config(bh))
			mustApply(t, c, config(union(bh, map[string]string{"r1": good("r1", "a:1")})))

			waitFor(t, "bh to be started", func() bool { _, ok := c.TargetStatus("bh"); return ok })
			s := status(t, c, "bh")
			if s.State != StateStarting || s.ConnectionState != ConnectionConnecting || s.Subscriptions["sub1"] != SubscriptionStopped {
				t.Fatalf("bh during the blackhole time = %+v, want starting, CONNECTING, sub1 stopped", s)
			}
			r1, ok := c.TargetStatus("r1")
			if held := !ok || !r1.Collecting(); held != tt.holdsOthers {
				t.Fatalf("r1 held behind bh = %v, want %v (r1: %+v)", held, tt.holdsOthers, r1)
			}

			waitFor(t, "bh to fail", func() bool { return status(t, c, "bh").State == StateFailed })
			s = status(t, c, "bh")
			if s.FailedReason != BlackholeReason || s.ConnectionState != ConnectionTransientFailure ||
				s.Subscriptions["sub1"] != SubscriptionStopped || s.Collecting() {
				t.Fatalf("bh after the blackhole time = %+v, want failed, TRANSIENT_FAILURE, not collecting", s)
			}
			waitFor(t, "r1 to collect", func() bool { s, ok := c.TargetStatus("r1"); return ok && s.Collecting() })

			c.ClearBlackhole("bh")
			if a := call(t, http.MethodPost, c.URL()+"/api/v1/targets/bh/state/enabled", ""); a.status != http.StatusOK {
				t.Fatalf("enable bh: %d %s", a.status, a.body)
			}
			if s := status(t, c, "bh"); !s.Collecting() {
				t.Fatalf("bh re-enabled once the device answers = %+v, want collecting", s)
			}
		})
	}
}
