package collector

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// settledByDefinition is what Entry.Settled means: acknowledged, read, running exactly the acknowledged
// targets, none of them starting (or without a state).
func settledByDefinition(acked bool, cfg gnmic.Config, rt Runtime) bool {
	if !acked || !rt.Known || len(rt.Targets) != len(cfg.Targets) {
		return false
	}
	for name, st := range rt.Targets {
		if _, sent := cfg.Targets[name]; !sent || st.State == gnmic.StateStarting || st.State == "" {
			return false
		}
	}
	return true
}

// TestSettledIsWorkedOutWithEveryAcknowledgementAndRead: Settled, worked out when the ledger records an
// acknowledgement or a read, is what its definition says of the entry as it stands, whichever came last, and a
// read's Names are its targets' names sorted, whether NewRuntime made it or not.
func TestSettledIsWorkedOutWithEveryAcknowledgementAndRead(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "net", Name: "telemetry-0", UID: "u1"}}
	states := []string{gnmic.StateRunning, gnmic.StateRunning, gnmic.StateRunning, gnmic.StateRunning, gnmic.StateRunning, gnmic.StateRunning, gnmic.StateStarting, "", gnmic.StateFailed}
	names := func() []string {
		out := []string{}
		for i := range 6 {
			if rng.Intn(3) > 0 {
				out = append(out, fmt.Sprintf("r%d", i))
			}
		}
		return out
	}
	settled := 0
	for round := range 500 {
		l := &Ledger{}
		acked, cfg, rt := false, gnmic.Config{}, Runtime{}
		for step := range 6 {
			if rng.Intn(2) == 0 {
				cfg = gnmic.Config{Targets: map[string]gnmic.TargetConfig{}}
				for _, n := range names() {
					cfg.Targets[n] = gnmic.TargetConfig{Name: n}
				}
				acked = true
				l.Record(pod, cfg, fmt.Sprintf("h%d", step))
			} else {
				targets := map[string]gnmic.TargetStatus{}
				source := names()
				if acked && rng.Intn(2) == 0 {
					source = cfg.TargetNames() // often exactly what was acknowledged
				}
				for _, n := range source {
					targets[n] = gnmic.TargetStatus{State: states[rng.Intn(len(states))]}
				}
				rt = NewRuntime(targets, nil)
				if rng.Intn(5) == 0 {
					rt = Runtime{} // could not be read
				} else if rng.Intn(3) == 0 {
					rt = Runtime{Known: true, Targets: targets} // made without NewRuntime: worked out on every call
				}
				l.NoteRead(pod, rt, time.Unix(int64(step), 0))
			}
			e := l.Entry(pod)
			want := settledByDefinition(acked, cfg, rt)
			if e.Settled() != want {
				t.Fatalf("round %d step %d: Settled %v, by definition %v (acked %v, config %v, read %+v)",
					round, step, e.Settled(), want, acked, cfg.TargetNames(), rt)
			}
			if want {
				settled++
			}
			var read []string
			for n := range rt.Targets {
				read = append(read, n)
			}
			slices.Sort(read)
			if !slices.Equal(e.Read.Names(), read) && len(read)+len(e.Read.Names()) > 0 {
				t.Fatalf("round %d step %d: Names %v, read %v", round, step, e.Read.Names(), read)
			}
		}
	}
	if settled < 100 {
		t.Fatalf("only %d settled entries: the rounds did not test Settled", settled)
	}
}

// TestListsExactlyAnswersAsAComparisonWould: whatever lists a read is compared with, in whatever order and
// however often (the same slices again, equal copies, other lists), ListsExactly answers what comparing the
// names would, for reads made by NewRuntime and reads that were not.
func TestListsExactlyAnswersAsAComparisonWould(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	randomNames := func() []string {
		var names []string
		for i := range 6 {
			if rng.Intn(3) > 0 {
				names = append(names, fmt.Sprintf("t-%d", i))
			}
		}
		return names
	}
	for round := range 200 {
		targets := map[string]gnmic.TargetStatus{}
		for _, name := range randomNames() {
			targets[name] = gnmic.TargetStatus{State: gnmic.StateRunning}
		}
		reads := map[string]Runtime{"made": NewRuntime(targets, nil), "literal": {Known: true, Targets: targets},
			"unknown": {Targets: targets}}
		// Lists compared, some the read's names (as a copy), kept and compared again.
		var lists [][]string
		for range 5 {
			if rng.Intn(2) == 0 {
				lists = append(lists, slices.Clone(reads["made"].Names()))
			} else {
				lists = append(lists, randomNames())
			}
		}
		for range 30 {
			names := lists[rng.Intn(len(lists))]
			for kind, rt := range reads {
				want := rt.Known && slices.Equal(names, rt.Names())
				if got := rt.ListsExactly(names); got != want {
					t.Fatalf("round %d, %s read of %v: ListsExactly(%v) = %v, want %v", round, kind, rt.Names(), names, got, want)
				}
			}
		}
	}
}

// TestFailedNamesAreTheFailedTargetsSorted: what NewRuntime works out once is what a read's states say, as for a
// read made without it.
func TestFailedNamesAreTheFailedTargetsSorted(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	states := []gnmic.TargetStatus{{State: gnmic.StateRunning}, {State: gnmic.StateFailed}, {State: gnmic.StateStarting}, {}}
	for round := range 100 {
		targets := map[string]gnmic.TargetStatus{}
		var want []string
		for i := range rng.Intn(12) {
			name := fmt.Sprintf("t-%02d", i)
			targets[name] = states[rng.Intn(len(states))]
			if targets[name].Failed() {
				want = append(want, name)
			}
		}
		for kind, rt := range map[string]Runtime{"made": NewRuntime(targets, nil), "literal": {Known: true, Targets: targets}} {
			if got := rt.FailedNames(); !slices.Equal(got, want) {
				t.Fatalf("round %d, %s read of %v: FailedNames %v, want %v", round, kind, targets, got, want)
			}
		}
	}
}

// TestSameReadTellsReadsThatSaidTheSame: two reads are the same when they list the same targets and dial-in
// devices in the same states, whatever maps hold them; any difference, or a read not made, makes them not.
func TestSameReadTellsReadsThatSaidTheSame(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	status := func(state string) gnmic.TargetStatus {
		return gnmic.TargetStatus{State: state, LastUpdated: at, ConnectionState: "READY", Subscriptions: map[string]string{"s": "running"}}
	}
	read := func(change func(map[string]gnmic.TargetStatus, map[string]TunnelTarget)) Runtime {
		targets := map[string]gnmic.TargetStatus{"a": status(gnmic.StateRunning), "b": status(gnmic.StateStarting)}
		tunnel := map[string]TunnelTarget{"d1": {Type: "router", Status: status(gnmic.StateRunning)}}
		if change != nil {
			change(targets, tunnel)
		}
		return NewRuntime(targets, tunnel)
	}
	base := read(nil)
	for _, tc := range []struct {
		name   string
		other  Runtime
		wanted bool
	}{
		{"the same, in other maps", read(nil), true},
		{"a state", read(func(m map[string]gnmic.TargetStatus, _ map[string]TunnelTarget) { m["b"] = status(gnmic.StateRunning) }), false},
		{"a subscription's state", read(func(m map[string]gnmic.TargetStatus, _ map[string]TunnelTarget) {
			s := status(gnmic.StateRunning)
			s.Subscriptions = map[string]string{"s": "stopped"}
			m["a"] = s
		}), false},
		{"last updated", read(func(m map[string]gnmic.TargetStatus, _ map[string]TunnelTarget) {
			s := status(gnmic.StateRunning)
			s.LastUpdated = at.Add(time.Second)
			m["a"] = s
		}), false},
		{"a target more", read(func(m map[string]gnmic.TargetStatus, _ map[string]TunnelTarget) { m["c"] = status(gnmic.StateRunning) }), false},
		{"a target renamed", read(func(m map[string]gnmic.TargetStatus, _ map[string]TunnelTarget) {
			m["c"] = m["b"]
			delete(m, "b")
		}), false},
		{"a device's type", read(func(_ map[string]gnmic.TargetStatus, d map[string]TunnelTarget) {
			d["d1"] = TunnelTarget{Type: "switch", Status: d["d1"].Status}
		}), false},
		{"a device less", read(func(_ map[string]gnmic.TargetStatus, d map[string]TunnelTarget) { delete(d, "d1") }), false},
		{"a read not made", Runtime{Targets: base.Targets, Tunnel: base.Tunnel}, false},
	} {
		if got := base.SameRead(tc.other); got != tc.wanted {
			t.Errorf("%s: SameRead = %v, want %v", tc.name, got, tc.wanted)
		}
		if got := tc.other.SameRead(base); got != tc.wanted {
			t.Errorf("%s (the other way round): SameRead = %v, want %v", tc.name, got, tc.wanted)
		}
	}
}
