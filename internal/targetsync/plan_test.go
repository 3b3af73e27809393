package targetsync_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/targetsync"
)

func d(name, address string) targetsync.Desired {
	return targetsync.Desired{Name: name, Address: address, Profile: "p"}
}

func owned(name, address string, missingSince int64) targetsync.Existing {
	return targetsync.Existing{Name: name, Owned: true, Address: address, Profile: "p", MissingSince: missingSince}
}

func noGuard(records int) targetsync.Guard { return targetsync.Guard{Records: records, Announced: -1} }

func TestPlanSync(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   targetsync.Input
		want targetsync.Plan
	}{{
		name: "creates what does not exist",
		in:   targetsync.Input{Desired: []targetsync.Desired{d("b", "h:1"), d("a", "h:2")}, Sync: 1, DeleteAfterMisses: 3, Guard: noGuard(2)},
		want: targetsync.Plan{Create: []targetsync.Desired{d("a", "h:2"), d("b", "h:1")}, Owned: 2},
	}, {
		name: "writes nothing for a Target as desired",
		in: targetsync.Input{Desired: []targetsync.Desired{d("a", "h:1")}, Existing: []targetsync.Existing{owned("a", "h:1", 0)},
			Sync: 2, DeleteAfterMisses: 3, Guard: noGuard(1)},
		want: targetsync.Plan{Unchanged: 1, Owned: 1},
	}, {
		name: "nil and empty labels and tags are alike",
		in: targetsync.Input{Desired: []targetsync.Desired{{Name: "a", Address: "h:1", Profile: "p", Labels: map[string]string{}}},
			Existing: []targetsync.Existing{{Name: "a", Owned: true, Address: "h:1", Profile: "p", Tags: map[string]string{}}},
			Sync:     2, DeleteAfterMisses: 3, Guard: noGuard(1)},
		want: targetsync.Plan{Unchanged: 1, Owned: 1},
	}, {
		name: "updates a Target whose address, profile, labels or tags changed",
		in: targetsync.Input{
			Desired: []targetsync.Desired{d("a", "h:9"), {Name: "b", Address: "h:1", Profile: "q"},
				{Name: "c", Address: "h:1", Profile: "p", Labels: map[string]string{"x": "1"}}, {Name: "e", Address: "h:1", Profile: "p", Tags: map[string]string{"t": "1"}}},
			Existing: []targetsync.Existing{owned("a", "h:1", 0), owned("b", "h:1", 0), owned("c", "h:1", 0), owned("e", "h:1", 0)},
			Sync:     2, DeleteAfterMisses: 3, Guard: noGuard(4)},
		want: targetsync.Plan{Update: []targetsync.Desired{d("a", "h:9"), {Name: "b", Address: "h:1", Profile: "q"},
			{Name: "c", Address: "h:1", Profile: "p", Labels: map[string]string{"x": "1"}}, {Name: "e", Address: "h:1", Profile: "p", Tags: map[string]string{"t": "1"}}}, Owned: 4},
	}, {
		name: "never writes a Target it does not own, and reports it",
		in: targetsync.Input{Desired: []targetsync.Desired{d("mine", "h:1"), d("hand-made", "h:1")},
			Existing: []targetsync.Existing{{Name: "hand-made", Address: "other:1", Profile: "x"}, {Name: "not-in-inventory", Address: "h:1"}},
			Sync:     1, DeleteAfterMisses: 1, Guard: noGuard(2)},
		want: targetsync.Plan{Create: []targetsync.Desired{d("mine", "h:1")}, Conflicts: []string{"hand-made"}, Owned: 1},
	}, {
		name: "takes a Target handed over by its annotation with a write, even one already as desired, and marks one missing before a delete",
		in: targetsync.Input{Desired: []targetsync.Desired{d("as-desired", "h:1")},
			Existing: []targetsync.Existing{{Name: "as-desired", Owned: true, Handed: true, Address: "h:1", Profile: "p"},
				{Name: "gone", Owned: true, Handed: true, Address: "h:2", Profile: "p"}},
			Sync: 4, DeleteAfterMisses: 1, Guard: noGuard(1)},
		want: targetsync.Plan{Update: []targetsync.Desired{d("as-desired", "h:1")}, Mark: []string{"gone"}, Missing: 1, Owned: 2},
	}, {
		name: "marks a Target whose device went missing",
		in: targetsync.Input{Existing: []targetsync.Existing{owned("a", "h:1", 0)}, Desired: []targetsync.Desired{d("b", "h:1")},
			Sync: 5, DeleteAfterMisses: 3, Guard: noGuard(1)},
		want: targetsync.Plan{Create: []targetsync.Desired{d("b", "h:1")}, Mark: []string{"a"}, Missing: 1, Owned: 2},
	}, {
		name: "keeps a marked Target before its last miss",
		in:   targetsync.Input{Existing: []targetsync.Existing{owned("a", "h:1", 5)}, Sync: 6, DeleteAfterMisses: 3, Guard: noGuard(0)},
		want: targetsync.Plan{Missing: 1, Owned: 1},
	}, {
		name: "deletes at the sync that makes deleteAfterMisses misses",
		in:   targetsync.Input{Existing: []targetsync.Existing{owned("a", "h:1", 5)}, Sync: 7, DeleteAfterMisses: 3, Guard: noGuard(0)},
		want: targetsync.Plan{Delete: []string{"a"}},
	}, {
		name: "deleteAfterMisses 1 deletes at the first miss",
		in:   targetsync.Input{Existing: []targetsync.Existing{owned("a", "h:1", 0)}, Sync: 7, DeleteAfterMisses: 1, Guard: noGuard(0)},
		want: targetsync.Plan{Delete: []string{"a"}},
	}, {
		name: "unmarks a device that came back, even unchanged",
		in: targetsync.Input{Desired: []targetsync.Desired{d("a", "h:1")}, Existing: []targetsync.Existing{owned("a", "h:1", 5)},
			Sync: 6, DeleteAfterMisses: 3, Guard: noGuard(1)},
		want: targetsync.Plan{Update: []targetsync.Desired{d("a", "h:1")}, Owned: 1},
	}, {
		name: "a mark from a later sync than this one counts from this one",
		in:   targetsync.Input{Existing: []targetsync.Existing{owned("a", "h:1", 40)}, Sync: 6, DeleteAfterMisses: 2, Guard: noGuard(0)},
		want: targetsync.Plan{Mark: []string{"a"}, Missing: 1, Owned: 1},
	}, {
		name: "an answer with fewer records than announced plans nothing",
		in: targetsync.Input{Existing: []targetsync.Existing{owned("a", "h:1", 5)}, Desired: []targetsync.Desired{d("b", "h:1")}, Sync: 7, DeleteAfterMisses: 1,
			Guard: targetsync.Guard{Records: 1, Announced: 2}},
		want: targetsync.Plan{Truncated: "the inventory announced 2 records and sent 1"},
	}, {
		name: "an answer under minPercent of the last plans nothing",
		in: targetsync.Input{Existing: []targetsync.Existing{owned("a", "h:1", 5)}, Sync: 7, DeleteAfterMisses: 1,
			Guard: targetsync.Guard{Records: 49, Announced: -1, LastRecords: 100, MinPercent: 50}},
		want: targetsync.Plan{Truncated: "49 records, fewer than 50% of the last sync's 100 (sync.minRecordsPercent)"},
	}, {
		name: "minPercent 0 lets an empty answer through",
		in: targetsync.Input{Existing: []targetsync.Existing{owned("a", "h:1", 0)}, Sync: 7, DeleteAfterMisses: 1,
			Guard: targetsync.Guard{Records: 0, Announced: -1, LastRecords: 100}},
		want: targetsync.Plan{Delete: []string{"a"}},
	}, {
		name: "exactly minPercent of the last is not truncated",
		in: targetsync.Input{Sync: 7, DeleteAfterMisses: 1,
			Guard: targetsync.Guard{Records: 50, Announced: 50, LastRecords: 100, MinPercent: 50}},
		want: targetsync.Plan{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := targetsync.PlanSync(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// world is a simulated namespace: the Targets as the controller would leave them after writing each plan.
type world struct {
	targets map[string]targetsync.Existing
	syncs   int64 // successful syncs (status.syncs)
}

func (w *world) existing() []targetsync.Existing {
	var out []targetsync.Existing
	for _, e := range w.targets {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b targetsync.Existing) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out
}

// apply writes a plan as the controller does.
func (w *world) apply(t *testing.T, p targetsync.Plan, sync int64) {
	for _, c := range p.Create {
		if _, ok := w.targets[c.Name]; ok {
			t.Fatalf("create of existing %s", c.Name)
		}
		w.targets[c.Name] = targetsync.Existing{Name: c.Name, Owned: true, Address: c.Address, Profile: c.Profile}
	}
	for _, u := range p.Update {
		if !w.targets[u.Name].Owned {
			t.Fatalf("update of a Target not owned: %s", u.Name)
		}
		w.targets[u.Name] = targetsync.Existing{Name: u.Name, Owned: true, Address: u.Address, Profile: u.Profile}
	}
	for _, m := range p.Mark {
		e := w.targets[m]
		if !e.Owned {
			t.Fatalf("mark of a Target not owned: %s", m)
		}
		e.MissingSince = sync
		w.targets[m] = e
	}
	for _, name := range p.Delete {
		if !w.targets[name].Owned {
			t.Fatalf("delete of a Target not owned: %s", name)
		}
		delete(w.targets, name)
	}
}

// TestPlanSyncProperties runs random inventories that flap, fail and truncate against a simulated namespace and
// checks the sync rules after every sync.
func TestPlanSyncProperties(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		misses := int64(1 + rng.IntN(4))
		w := &world{targets: map[string]targetsync.Existing{
			"hand-0": {Name: "hand-0", Address: "x:1"}, "hand-1": {Name: "hand-1", Address: "x:1"},
		}}
		// lastSeen is the successful sync each device was last in.
		lastSeen := map[string]int64{}
		lastRecords := 0
		for step := 0; step < 40; step++ {
			outcome := rng.IntN(10)
			if outcome == 0 {
				continue // a failed fetch: nothing is planned, nothing written, the sync number stays
			}
			var desired []targetsync.Desired
			for i := range 12 {
				if rng.IntN(4) != 0 { // each device flaps in and out of the inventory
					desired = append(desired, d(fmt.Sprintf("dev-%d", i), fmt.Sprintf("h:%d", 1+rng.IntN(2))))
				}
			}
			if rng.IntN(3) == 0 {
				desired = append(desired, d("hand-0", "h:1")) // the inventory names a hand-made Target
			}
			guard := targetsync.Guard{Records: len(desired), Announced: -1, LastRecords: lastRecords, MinPercent: 50}
			if outcome == 1 { // a truncated answer
				guard.Announced = len(desired) + 1 + rng.IntN(5)
			}
			before := maps(w.targets)
			sync := w.syncs + 1
			in := targetsync.Input{Desired: desired, Existing: w.existing(), Sync: sync, DeleteAfterMisses: misses, Guard: guard}
			p := targetsync.PlanSync(in)
			if truncated, _ := guard.Truncated(); truncated {
				if p.Writes() != 0 || p.Truncated == "" {
					t.Fatalf("seed %d: a truncated answer planned %+v", seed, p)
				}
				if !reflect.DeepEqual(before, maps(w.targets)) {
					t.Fatalf("seed %d: a truncated answer changed the namespace", seed)
				}
				continue
			}
			w.apply(t, p, sync)
			w.syncs = sync
			lastRecords = len(desired)
			for _, x := range desired {
				if x.Name != "hand-0" {
					lastSeen[x.Name] = sync
				}
			}
			// A replica that replays the same sync (a handover while the status write was in flight) writes nothing.
			if again := targetsync.PlanSync(targetsync.Input{Desired: desired, Existing: w.existing(), Sync: sync, DeleteAfterMisses: misses, Guard: guard}); again.Writes() != 0 {
				t.Fatalf("seed %d: replaying sync %d writes %+v", seed, sync, again)
			}
			for _, name := range p.Delete {
				if missed := sync - lastSeen[name]; missed < misses {
					t.Fatalf("seed %d: %s deleted at sync %d after %d misses, seen at %d (deleteAfterMisses %d)", seed, name, sync, missed, lastSeen[name], misses)
				}
			}
			for name, seen := range lastSeen {
				_, exists := w.targets[name]
				missed := sync - seen
				if exists != (missed < misses) {
					t.Fatalf("seed %d: %s exists=%v at sync %d, last seen at %d (deleteAfterMisses %d)", seed, name, exists, sync, seen, misses)
				}
			}
			for _, h := range []string{"hand-0", "hand-1"} {
				if e, ok := w.targets[h]; !ok || e.Owned || e.Address != "x:1" {
					t.Fatalf("seed %d: hand-made %s was touched: %+v", seed, h, e)
				}
			}
		}
	}
}

func maps(m map[string]targetsync.Existing) map[string]targetsync.Existing {
	out := make(map[string]targetsync.Existing, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
