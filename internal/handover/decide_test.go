package handover

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func names(prefix string, from, n int) []string {
	out := make([]string, 0, n)
	for i := from; i < from+n; i++ {
		out = append(out, fmt.Sprintf("%s%03d", prefix, i))
	}
	return out
}

func input(batch int, cs ...Collector) Input {
	return Input{Collectors: cs, BatchSize: batch, DropTimeout: time.Minute, RepairAfter: 10 * time.Second, Now: t0}
}

func stepOf(t *testing.T, d Decision, ordinal int) Step {
	t.Helper()
	for _, s := range d.Steps {
		if s.Ordinal == ordinal {
			return s
		}
	}
	t.Fatalf("no step for collector %d", ordinal)
	return Step{}
}

func TestDecide(t *testing.T) {
	all := names("r", 0, 300)
	tests := []struct {
		name  string
		in    Input
		mem   Memory
		check func(t *testing.T, d Decision)
	}{{
		name: "a new collector is sent its targets in batches, in name order",
		in:   input(100, Collector{Ordinal: 0, Desired: all, RunningKnown: true}),
		check: func(t *testing.T, d Decision) {
			s := stepOf(t, d, 0)
			if !slices.Equal(s.Send, all[:100]) || !slices.Equal(s.Added, all[:100]) || s.Queued != 200 || s.Settled {
				t.Fatalf("step = send %d (first %v) queued %d settled %v", len(s.Send), s.Send[:1], s.Queued, s.Settled)
			}
		},
	}, {
		name: "changes the collector has not acted on yet count against the batch",
		in:   input(100, Collector{Ordinal: 0, Desired: all, Sent: all[:100], Running: all[:30], RunningKnown: true}),
		check: func(t *testing.T, d Decision) {
			s := stepOf(t, d, 0)
			if len(s.Added) != 30 || s.Added[0] != all[100] || len(s.Missing) != 70 || s.Queued != 170 {
				t.Fatalf("added %d from %v, missing %d, queued %d", len(s.Added), s.Added[:1], len(s.Missing), s.Queued)
			}
		},
	}, {
		name: "a moved target waits while its old collector was sent it",
		in: input(100,
			Collector{Ordinal: 0, Desired: []string{"a"}, Sent: []string{"a", "b"}, Running: []string{"a", "b"}, RunningKnown: true},
			Collector{Ordinal: 1, Desired: []string{"b"}, RunningKnown: true}),
		check: func(t *testing.T, d Decision) {
			old, new := stepOf(t, d, 0), stepOf(t, d, 1)
			if !slices.Equal(old.Removed, []string{"b"}) || !slices.Equal(old.Send, []string{"a"}) {
				t.Fatalf("old collector step %+v", old)
			}
			if len(new.Send) != 0 || !slices.Equal(new.Waiting, []string{"b"}) {
				t.Fatalf("new collector step %+v", new)
			}
			if got := d.Memory.Waiting["b"]; !got.Equal(t0) || !d.NextLook.Equal(t0.Add(time.Minute)) {
				t.Fatalf("waiting since %v, next look %v", got, d.NextLook)
			}
		},
	}, {
		name: "a moved target waits while its old collector still runs it, although the removal was acknowledged",
		in: input(100,
			Collector{Ordinal: 0, Desired: []string{"a"}, Sent: []string{"a"}, Running: []string{"a", "b"}, RunningKnown: true},
			Collector{Ordinal: 1, Desired: []string{"b"}, RunningKnown: true}),
		mem: Memory{Waiting: map[string]time.Time{"b": t0.Add(-5 * time.Second)}},
		check: func(t *testing.T, d Decision) {
			if s := stepOf(t, d, 1); len(s.Send) != 0 || !slices.Equal(s.Waiting, []string{"b"}) {
				t.Fatalf("new collector step %+v", s)
			}
			if got := d.Memory.Waiting["b"]; !got.Equal(t0.Add(-5 * time.Second)) {
				t.Fatalf("the wait started over: %v", got)
			}
		},
	}, {
		name: "a moved target goes to its new collector once the old one no longer lists it",
		in: input(100,
			Collector{Ordinal: 0, Desired: []string{"a"}, Sent: []string{"a"}, Running: []string{"a"}, RunningKnown: true},
			Collector{Ordinal: 1, Desired: []string{"b"}, RunningKnown: true}),
		mem: Memory{Waiting: map[string]time.Time{"b": t0.Add(-5 * time.Second)}},
		check: func(t *testing.T, d Decision) {
			if s := stepOf(t, d, 1); !slices.Equal(s.Send, []string{"b"}) || len(d.Overlaps) != 0 {
				t.Fatalf("new collector step %+v, overlaps %v", s, d.Overlaps)
			}
			if _, ok := d.Memory.Waiting["b"]; ok {
				t.Fatal("the finished wait is remembered")
			}
		},
	}, {
		name: "after the drop timeout the move goes ahead and is reported as a possible overlap",
		in: input(100,
			Collector{Ordinal: 0, Sent: nil, Running: []string{"b"}, RunningKnown: true},
			Collector{Ordinal: 1, Desired: []string{"b"}, RunningKnown: true}),
		mem: Memory{Waiting: map[string]time.Time{"b": t0.Add(-time.Minute)}},
		check: func(t *testing.T, d Decision) {
			if s := stepOf(t, d, 1); !slices.Equal(s.Added, []string{"b"}) {
				t.Fatalf("new collector step %+v", s)
			}
			want := []Overlap{{Target: "b", To: 1, Holders: []int{0}, Waited: time.Minute}}
			if len(d.Overlaps) != 1 || d.Overlaps[0].Target != "b" || !slices.Equal(d.Overlaps[0].Holders, want[0].Holders) ||
				d.Overlaps[0].Waited != time.Minute {
				t.Fatalf("overlaps %+v, want %+v", d.Overlaps, want)
			}
		},
	}, {
		name: "a timed-out move that does not fit the batch keeps its wait and is not yet an overlap",
		in: input(1,
			Collector{Ordinal: 0, Running: []string{"b"}, RunningKnown: true},
			Collector{Ordinal: 1, Desired: []string{"a", "b"}, RunningKnown: true}),
		mem: Memory{Waiting: map[string]time.Time{"b": t0.Add(-2 * time.Minute)}},
		check: func(t *testing.T, d Decision) {
			if s := stepOf(t, d, 1); !slices.Equal(s.Added, []string{"a"}) || s.Queued != 1 {
				t.Fatalf("step %+v", s)
			}
			if len(d.Overlaps) != 0 || !d.Memory.Waiting["b"].Equal(t0.Add(-2*time.Minute)) {
				t.Fatalf("overlaps %v, waiting %v", d.Overlaps, d.Memory.Waiting)
			}
		},
	}, {
		name: "removals go before updates, updates before adds",
		in: input(3, Collector{Ordinal: 0, Desired: []string{"a", "c", "d", "e"}, Sent: []string{"a", "b", "c"},
			Changed: []string{"a", "c"}, Running: []string{"a", "b", "c"}, RunningKnown: true}),
		check: func(t *testing.T, d Decision) {
			s := stepOf(t, d, 0)
			if !slices.Equal(s.Removed, []string{"b"}) || !slices.Equal(s.Update, []string{"a", "c"}) || len(s.Added) != 0 ||
				s.Queued != 2 || !slices.Equal(s.Send, []string{"a", "c"}) {
				t.Fatalf("step %+v", s)
			}
		},
	}, {
		name: "a target sent but not running on a collector that acted on nothing for the repair delay is removed to be added again",
		in:   input(100, Collector{Ordinal: 0, Desired: []string{"a", "b"}, Sent: []string{"a", "b"}, Running: []string{"a"}, RunningKnown: true}),
		mem:  Memory{Progress: map[int]Progress{0: {Outstanding: 1, Since: t0.Add(-10 * time.Second)}}},
		check: func(t *testing.T, d Decision) {
			s := stepOf(t, d, 0)
			if !slices.Equal(s.Repaired, []string{"b"}) || !slices.Equal(s.Send, []string{"a"}) || s.Settled {
				t.Fatalf("step %+v", s)
			}
			if d.Memory.Repairs[Slot{0, "b"}] != 1 {
				t.Fatalf("repairs %v", d.Memory.Repairs)
			}
		},
	}, {
		name: "the repair delay doubles with every repair of the same target",
		in:   input(100, Collector{Ordinal: 0, Desired: []string{"a", "b"}, Sent: []string{"a", "b"}, Running: []string{"a"}, RunningKnown: true}),
		mem: Memory{Progress: map[int]Progress{0: {Outstanding: 1, Since: t0.Add(-15 * time.Second)}},
			Repairs: map[Slot]int{{0, "b"}: 1}},
		check: func(t *testing.T, d Decision) {
			s := stepOf(t, d, 0)
			if len(s.Repaired) != 0 || !slices.Equal(s.Missing, []string{"b"}) || !d.NextLook.Equal(t0.Add(5*time.Second)) {
				t.Fatalf("step %+v, next look %v", s, d.NextLook)
			}
			if d.Memory.Repairs[Slot{0, "b"}] != 1 {
				t.Fatalf("repairs forgotten: %v", d.Memory.Repairs)
			}
		},
	}, {
		name: "a collector that still acts on its changes is not repaired, however long a target has waited",
		in:   input(100, Collector{Ordinal: 0, Desired: []string{"a", "b", "c"}, Sent: []string{"a", "b", "c"}, Running: []string{"a"}, RunningKnown: true}),
		mem:  Memory{Progress: map[int]Progress{0: {Outstanding: 3, Since: t0.Add(-time.Hour)}}},
		check: func(t *testing.T, d Decision) {
			if s := stepOf(t, d, 0); len(s.Repaired) != 0 || len(s.Missing) != 2 {
				t.Fatalf("step %+v", s)
			}
			if p := d.Memory.Progress[0]; p != (Progress{Outstanding: 2, Since: t0}) {
				t.Fatalf("progress %+v", p)
			}
		},
	}, {
		name: "a repaired target is added again by the next step",
		in:   input(100, Collector{Ordinal: 0, Desired: []string{"a", "b"}, Sent: []string{"a"}, Running: []string{"a"}, RunningKnown: true}),
		mem:  Memory{Repairs: map[Slot]int{{0, "b"}: 1}},
		check: func(t *testing.T, d Decision) {
			if s := stepOf(t, d, 0); !slices.Equal(s.Added, []string{"b"}) {
				t.Fatalf("step %+v", s)
			}
		},
	}, {
		name: "a target run without being sent is stale after the repair delay and stops counting against the batch",
		in: input(1, Collector{Ordinal: 0, Desired: []string{"a"}, Sent: nil, Running: []string{"z"}, RunningKnown: true},
			Collector{Ordinal: 1, Desired: []string{"z"}, RunningKnown: true}),
		mem: Memory{Progress: map[int]Progress{0: {Outstanding: 1, Since: t0.Add(-time.Hour)}}},
		check: func(t *testing.T, d Decision) {
			s := stepOf(t, d, 0)
			if !slices.Equal(s.Stale, []string{"z"}) || !slices.Equal(s.Added, []string{"a"}) {
				t.Fatalf("step %+v", s)
			}
			if other := stepOf(t, d, 1); !slices.Equal(other.Waiting, []string{"z"}) {
				t.Fatalf("a stale target does not block its move: %+v", other)
			}
		},
	}, {
		name: "a collector whose state could not be read keeps its memory and is not settled",
		in:   input(100, Collector{Ordinal: 0, Desired: []string{"a"}, Sent: []string{"a"}}),
		mem:  Memory{Progress: map[int]Progress{0: {Outstanding: 1, Since: t0.Add(-time.Second)}}},
		check: func(t *testing.T, d Decision) {
			s := stepOf(t, d, 0)
			if s.Settled || s.Changes() || d.Memory.Progress[0] != (Progress{Outstanding: 1, Since: t0.Add(-time.Second)}) {
				t.Fatalf("step %+v, memory %v", s, d.Memory.Progress)
			}
		},
	}, {
		name: "a collector that runs exactly what it should is settled and sent nothing",
		in:   input(100, Collector{Ordinal: 0, Desired: []string{"a", "b"}, Sent: []string{"b", "a"}, Running: []string{"a", "b"}, RunningKnown: true}),
		check: func(t *testing.T, d Decision) {
			if s := stepOf(t, d, 0); !s.Settled || s.Changes() || !slices.Equal(s.Send, []string{"a", "b"}) {
				t.Fatalf("step %+v", s)
			}
			if len(d.Memory.Progress)+len(d.Memory.Waiting)+len(d.Memory.Repairs) != 0 || !d.NextLook.IsZero() {
				t.Fatalf("memory %+v, next look %v", d.Memory, d.NextLook)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, Decide(tc.in, tc.mem)) })
	}
}

func TestDecideCountsWhatCannotBeSeenAsHeld(t *testing.T) {
	tests := []struct {
		name string
		in   Input
	}{{
		name: "a collector that could not be read still holds what it ran last, although its removal was acknowledged",
		in: input(100,
			Collector{Ordinal: 0, Desired: nil, Sent: nil, Running: []string{"b"}, RunningKnown: false},
			Collector{Ordinal: 1, Desired: []string{"b"}, RunningKnown: true}),
	}, {
		name: "a target a terminating pod's collector still runs waits for it",
		in: func() Input {
			in := input(100, Collector{Ordinal: 1, Desired: []string{"b"}, RunningKnown: true})
			in.HeldElsewhere = []string{"b"}
			return in
		}(),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.in, Memory{})
			if s := stepOf(t, d, 1); len(s.Send) != 0 || !slices.Equal(s.Waiting, []string{"b"}) {
				t.Fatalf("the move went ahead: %+v", s)
			}
			tc.in.Now = tc.in.Now.Add(time.Minute)
			d = Decide(tc.in, d.Memory)
			if s := stepOf(t, d, 1); !slices.Equal(s.Added, []string{"b"}) || len(d.Overlaps) != 1 {
				t.Fatalf("after the drop timeout: %+v, overlaps %v", s, d.Overlaps)
			}
		})
	}
}
