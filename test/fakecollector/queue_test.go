package fakecollector

import (
	"net/http"
	"reflect"
	"testing"
	"time"
)

func TestOneApplyOf200NewTargetsStartsExactly128AndTheOthersNever(t *testing.T) {
	c := StartForTest(t, Realistic())
	body := config(numbered("r", 200))
	mustApply(t, c, body)
	waitIdle(t, c)

	if got := len(configured(t, c)); got != 200 {
		t.Fatalf("configured targets = %d, want all 200 stored", got)
	}
	runs := running(t, c)
	if len(runs) != 128 || c.Dropped() != 72 {
		t.Fatalf("running = %d, dropped = %d, want 128 running and 72 dropped", len(runs), c.Dropped())
	}
	for name, v := range runs {
		if !v.State.Collecting() {
			t.Errorf("%s acted on but not collecting: %+v", name, v.State)
		}
	}
	if got := c.Counts("r199"); got.Added != 1 || got.Starts != 0 || got.Dropped != 1 {
		t.Fatalf("counts of a dropped add = %+v, want added to the config, never started", got)
	}

	if changes := mustApply(t, c, body); !changes.Empty() {
		t.Fatalf("an identical re-apply must change nothing, got %+v", changes.Targets)
	}
	waitIdle(t, c)
	if got := len(running(t, c)); got != 128 || c.Dropped() != 72 {
		t.Fatalf("after an identical re-apply: %d running, %d dropped; want the same 128 and 72", got, c.Dropped())
	}
}

func TestTwoAppliesSentBackToBackOverflowTheQueueOfASlowWorker(t *testing.T) {
	c := StartForTest(t, WithChangeQueue(128, time.Second))
	first := numbered("a", 100)
	mustApply(t, c, config(first))
	if c.Dropped() != 0 {
		t.Fatalf("100 changes fit in the queue, dropped %d", c.Dropped())
	}
	mustApply(t, c, config(union(first, numbered("b", 100))))

	// The worker took at most the first change between the two applies.
	if d := c.Dropped(); d < 71 || d > 72 {
		t.Fatalf("dropped = %d, want 71 or 72 of the second apply", d)
	}
	if c.Pending() != 128 || c.Idle() {
		t.Fatalf("pending = %d, idle = %v; want a full queue", c.Pending(), c.Idle())
	}
	if got := len(c.ConfiguredTargets()); got != 200 {
		t.Fatalf("configured = %d, want both applies stored", got)
	}
}

func TestAnApplyIsAnsweredOnceStoredBeforeItsTargetsAreActedOn(t *testing.T) {
	c := StartForTest(t, Realistic())
	c.Blackhole("bh", time.Minute)
	mustApply(t, c, config(map[string]string{"bh": good("bh", "h:1")}))
	waitFor(t, "the worker to be held by bh", func() bool { return c.Pending() == 0 && !c.Idle() })

	s := openStream(t, c.URL()+"/api/v1/sse/targets?store=config")
	s.next(t) // the initial create of bh
	mustApply(t, c, config(map[string]string{"bh": good("bh", "h:1"), "r1": good("r1", "a:1")}))

	if ev := s.next(t); ev.EventType != eventCreate || ev.Name != "r1" {
		t.Fatalf("config event = %s %s, want the create of r1 at once", ev.EventType, ev.Name)
	}
	if _, ok := configured(t, c)["r1"]; !ok {
		t.Fatal("GET /api/v1/config/targets must list r1 as soon as the apply is answered")
	}
	if a := call(t, http.MethodGet, c.URL()+"/api/v1/targets/r1", ""); a.status != http.StatusNotFound {
		t.Fatalf("GET /api/v1/targets/r1 = %d, want 404 until the worker gets to it", a.status)
	}
	if c.Pending() != 1 {
		t.Fatalf("pending = %d, want the add of r1 waiting", c.Pending())
	}
}

// fillQueue leaves a collector with a one-entry change queue that already
// runs r1 with a full queue: the worker is held by a blackholed start for
// hole and the filler's add waits behind it.
func fillQueue(t *testing.T, hole time.Duration) (*Collector, map[string]string) {
	t.Helper()
	c := StartForTest(t, WithChangeQueue(1, time.Millisecond))
	base := map[string]string{"r1": good("r1", "a:1") + `,"subscriptions":["sub1"]`}
	mustApply(t, c, config(base))
	waitIdle(t, c)

	c.Blackhole("bh", hole)
	others := map[string]string{"bh": good("bh", "h:1")}
	mustApply(t, c, config(union(base, others)))
	waitFor(t, "the worker to be held by bh", func() bool { return c.Pending() == 0 && !c.Idle() })
	others["filler"] = good("filler", "f:1")
	mustApply(t, c, config(union(base, others)))
	if c.Pending() != 1 || c.Dropped() != 0 {
		t.Fatalf("pending = %d, dropped = %d; want the filler queued", c.Pending(), c.Dropped())
	}
	return c, others
}

func TestAChangeThatOverflowsTheQueueLeavesTheRunningTargetAsItWas(t *testing.T) {
	tests := []struct {
		name string
		// r1 is r1's body in the next apply, "" to remove it.
		r1 string
		// wantConfigured is what the config endpoints show for r1 afterwards.
		wantConfigured bool
		check          func(t *testing.T, v targetView)
	}{
		{
			name: "a dropped delete keeps the target running and collecting", r1: "",
			check: func(t *testing.T, v targetView) {},
		},
		{
			name: "a dropped reconnect keeps the old address", r1: good("r1", "b:1") + `,"subscriptions":["sub1"]`,
			wantConfigured: true,
			check: func(t *testing.T, v targetView) {
				if v.Config["address"] != "a:1" {
					t.Errorf("running address = %v, want a:1", v.Config["address"])
				}
			},
		},
		{
			name: "a dropped in-place change keeps the old tags", r1: good("r1", "a:1") + `,"subscriptions":["sub1"],"tags":["edge"]`,
			wantConfigured: true,
			check: func(t *testing.T, v targetView) {
				if _, ok := v.Config["tags"]; ok {
					t.Errorf("running config has tags %v, want none", v.Config["tags"])
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, others := fillQueue(t, 300*time.Millisecond)
			next := union(others)
			if tt.r1 != "" {
				next["r1"] = tt.r1
			}
			mustApply(t, c, config(next))
			if c.Dropped() != 1 || c.Counts("r1").Dropped != 1 {
				t.Fatalf("dropped = %d (r1: %d), want r1's change dropped", c.Dropped(), c.Counts("r1").Dropped)
			}
			waitIdle(t, c)

			if _, ok := configured(t, c)["r1"]; ok != tt.wantConfigured {
				t.Errorf("r1 configured = %v, want %v: the store follows every apply", ok, tt.wantConfigured)
			}
			v, ok := running(t, c)["r1"]
			if !ok || !v.State.Collecting() {
				t.Fatalf("r1 must still run and collect, got %+v (listed %v)", v.State, ok)
			}
			if got := c.Counts("r1").Starts; got != 1 {
				t.Errorf("r1 starts = %d, want 1: nothing acted on the dropped change", got)
			}
			tt.check(t, v)
		})
	}
}

func TestALaterChangeOfATargetWhoseAddWasDroppedStartsIt(t *testing.T) {
	c := StartForTest(t, Realistic())
	targets := numbered("r", 129)
	mustApply(t, c, config(targets))
	waitIdle(t, c)
	if _, ok := running(t, c)["r128"]; ok || c.Dropped() != 1 {
		t.Fatalf("r128 must have been dropped (dropped %d)", c.Dropped())
	}

	targets["r128"] += `,"tags":["late"]`
	mustApply(t, c, config(targets))
	waitIdle(t, c)
	if v, ok := running(t, c)["r128"]; !ok || !v.State.Collecting() {
		t.Fatalf("a changed config is an event gNMIc acts on by creating the target, got %+v", v)
	}
}

func TestWithoutAChangeQueueTheCollectorIsAlwaysIdle(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(numbered("r", 200)))
	if !c.Idle() || c.Pending() != 0 || c.Dropped() != 0 || len(c.Targets()) != 200 {
		t.Fatalf("idle %v, pending %d, dropped %d, running %d; want all 200 acted on in the apply",
			c.Idle(), c.Pending(), c.Dropped(), len(c.Targets()))
	}
	if !reflect.DeepEqual(c.Targets(), c.ConfiguredTargets()) {
		t.Fatal("without a queue the running targets are the configured ones")
	}
	waitIdle(t, c)
}
