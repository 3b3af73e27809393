package clusterplacement

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randomFleet is a fleet of up to 8 desired pods, some ready, some holding, with up to 40 targets recorded
// on any pod (desired or gone) or none, some with a last pod, some skipped.
func randomFleet(r *rand.Rand) Fleet {
	f := Fleet{PodCapacity: r.IntN(3) * r.IntN(10), Current: map[string]int{}, Last: map[string]int{}}
	for o := range r.IntN(9) {
		f.Desired = append(f.Desired, o)
		switch r.IntN(4) {
		case 0:
			f.Holding = append(f.Holding, o)
		case 1: // gone past its grace period
		default:
			f.Ready = append(f.Ready, o)
		}
	}
	for i := range r.IntN(41) {
		name := fmt.Sprintf("t%d", i)
		if r.IntN(8) == 0 {
			f.Skipped = append(f.Skipped, name)
		} else {
			f.Placeable = append(f.Placeable, name)
		}
		if r.IntN(4) > 0 {
			f.Current[name] = r.IntN(10)
		}
		if r.IntN(4) == 0 {
			f.Last[name] = r.IntN(10)
		}
	}
	return f
}

func TestPlacePropertiesOfRandomFleets(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 5))
	for i := range 3000 {
		f := randomFleet(r)
		p := Place(f)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("fleet %d %+v: %s", i, f, fmt.Sprintf(format, args...))
		}
		if !slices.Equal(p.Input.Pods, f.Ready) || p.Input.PodCapacity != f.PodCapacity {
			fail("placement got pods %v capacity %d", p.Input.Pods, p.Input.PodCapacity)
		}
		given := map[string]bool{}
		for _, target := range p.Input.Targets {
			given[target.Name] = true
		}
		unassigned := map[string]bool{}
		for _, name := range p.Result.Unassigned {
			unassigned[name] = true
		}
		for _, name := range f.Placeable {
			o, recorded := f.Current[name]
			holdingPod := recorded && slices.Contains(f.Holding, o)
			held, isHeld := p.Held[name]
			switch {
			case holdingPod != isHeld:
				fail("%s recorded on %d (holding %v) held %v", name, o, holdingPod, isHeld)
			case isHeld && (held != o || given[name]):
				fail("%s held on %d, recorded on %d, given to placement %v", name, held, o, given[name])
			case !isHeld && !given[name]:
				fail("%s neither held nor placed", name)
			}
			if a, ok := p.Result.Assignments[name]; ok && !slices.Contains(f.Ready, a) {
				fail("%s assigned to pod %d, not ready", name, a)
			}
			if _, ok := p.Assignment(name); !ok && !unassigned[name] {
				fail("%s has no pod and is not unassigned", name)
			}
		}
		for _, name := range f.Skipped {
			if given[name] {
				fail("skipped %s given to placement", name)
			}
			want, ok := f.Last[name]
			if !ok {
				want, ok = f.Current[name]
			}
			if got, has := p.Last[name]; has != ok || got != want {
				fail("skipped %s: last %d (%v), want %d (%v)", name, got, has, want, ok)
			}
		}
		for name, last := range p.Last {
			if _, ok := f.Current[name]; !ok {
				if l, ok := f.Last[name]; !ok || l != last {
					fail("%s: last %d without a recorded pod or last pod", name, last)
				}
			}
		}
	}
}

// TestEqualFleetsPlaceAlike: a fleet equal to another places exactly as it does (so a reconcile may keep the
// last placement of an equal fleet), and a change to anything Place reads makes the fleets unequal.
func TestEqualFleetsPlaceAlike(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	changes := []func(*Fleet){
		func(f *Fleet) { f.PodCapacity++ },
		func(f *Fleet) { f.Desired = append(f.Desired, 99) },
		func(f *Fleet) { f.Ready = append(f.Ready, 98) },
		func(f *Fleet) { f.Holding = append(f.Holding, 97) },
		func(f *Fleet) { f.Placeable = append(f.Placeable, "new") },
		func(f *Fleet) { f.Skipped = append(f.Skipped, "new") },
		func(f *Fleet) { f.Current["new"] = 1 },
		func(f *Fleet) { f.Last["new"] = 1 },
		func(f *Fleet) { f.Weights.Of = map[string]int{"t0": 3} },
		func(f *Fleet) { f.Weights.Fill++ },
	}
	for i := range 300 {
		f := randomFleet(r)
		g := copyFleet(f)
		if !f.Equal(g) {
			t.Fatalf("fleet %d is not equal to its copy", i)
		}
		if a, b := Place(f), Place(g); !reflect.DeepEqual(a, b) {
			t.Fatalf("fleet %d: equal fleets placed differently:\n%+v\n%+v", i, a, b)
		}
		for j, change := range changes {
			h := copyFleet(f)
			change(&h)
			if f.Equal(h) {
				t.Fatalf("fleet %d: change %d left the fleets equal", i, j)
			}
		}
	}
}

func copyFleet(f Fleet) Fleet {
	g := f
	g.Desired, g.Ready, g.Holding = slices.Clone(f.Desired), slices.Clone(f.Ready), slices.Clone(f.Holding)
	g.Placeable, g.Skipped = slices.Clone(f.Placeable), slices.Clone(f.Skipped)
	g.Current, g.Last, g.Weights.Of = maps.Clone(f.Current), maps.Clone(f.Last), maps.Clone(f.Weights.Of)
	if g.Current == nil {
		g.Current = map[string]int{}
	}
	if g.Last == nil {
		g.Last = map[string]int{}
	}
	return g
}
