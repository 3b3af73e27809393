package placement

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// heavyTail gives the targets of in weights from a Pareto mix (alpha 1.2,
// capped at 64) in place of the generator's 0..4, now and then.
func (g *generator) heavyTail(in *Input) {
	if g.rng.IntN(2) == 0 {
		return
	}
	for i := range in.Targets {
		if in.Targets[i].Weight >= 0 { // lenient inputs keep their negative weights
			in.Targets[i].Weight = paretoWeight(g.rng, 1.2, 64)
		}
	}
}

// paretoWeight draws floor(X) for X Pareto-distributed with this alpha and
// scale 1, capped: P(weight >= w) = w^-alpha below the cap.
func paretoWeight(rng *rand.Rand, alpha float64, capped int) int {
	u := 1 - rng.Float64() // in (0, 1]
	return int(min(math.Floor(math.Pow(u, -1/alpha)), float64(capped)))
}

// paretoFleet is n targets whose weights follow a Pareto mix, the same on
// every call with the same arguments.
func paretoFleet(n int, alpha float64, capped int, seed uint64) []Target {
	rng := rand.New(rand.NewPCG(seed, 0x5EED))
	targets := make([]Target, n)
	for i := range targets {
		targets[i] = Target{Name: fmt.Sprintf("dc%02d/router-%07d", i%40, i), Weight: paretoWeight(rng, alpha, capped)}
	}
	rng.Shuffle(n, func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
	return targets
}

func TestFillByWeightPlacesAFleetOfWeightOneExactlyAsFillByName(t *testing.T) {
	kinds := []struct {
		name           string
		lenient, lasts bool
	}{{"valid", false, false}, {"lenient", true, false}, {"with last pods", false, true}, {"lenient with last pods", true, true}}
	for k, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			g := newGenerator(uint64(k)+101, false, kind.lenient)
			g.lasts = kind.lasts
			compared := 0
			for range 3000 {
				in := g.input()
				if !normalize(in).allWeightOne() {
					continue // lenient input can carry weights above 1
				}
				compared++
				byName := place(t, in)
				in.Fill = FillByWeight
				if byWeight := Place(in); !reflect.DeepEqual(byWeight, byName) {
					t.Fatalf("every weight 1, FillByWeight differs from FillByName\ninput: %s\nByWeight: %+v\nByName:   %+v", describe(in), byWeight, byName)
				}
			}
			if compared < 750 {
				t.Fatalf("only %d inputs of weight 1 compared", compared)
			}
		})
	}
	t.Run("scale sequences", func(t *testing.T) {
		for seq := range 100 {
			g := newGenerator(uint64(2000+seq), false, false)
			in := g.input()
			for range 25 {
				byName := place(t, in)
				in.Fill = FillByWeight
				if byWeight := Place(in); !reflect.DeepEqual(byWeight, byName) {
					t.Fatalf("every weight 1, FillByWeight differs from FillByName\ninput: %s", describe(in))
				}
				in.Fill = FillByName
				in.Current = byName.Assignments
				g.step(&in)
			}
		}
	})
	t.Run("10,000 targets scaled from 1 to 12 pods and back", func(t *testing.T) {
		in := Input{Targets: benchTargets(10_000)}
		for _, pods := range []int{1, 2, 3, 5, 8, 12, 11, 7, 4, 1} {
			in.Pods = ordinals(pods)
			byName := Place(in)
			in.Fill = FillByWeight
			if byWeight := Place(in); !reflect.DeepEqual(byWeight, byName) {
				t.Fatalf("on %d pods, FillByWeight differs from FillByName", pods)
			}
			in.Fill = FillByName
			in.Current = byName.Assignments
		}
	})
}

func TestFillByWeightAgreesWithTheReferenceAndKeepsEveryGuarantee(t *testing.T) {
	kinds := []struct {
		name                     string
		weighted, lenient, lasts bool
	}{
		{"weighted", true, false, false},
		{"lenient", true, true, false},
		{"weighted with last pods", true, false, true},
		{"lenient with last pods", true, true, true},
	}
	for k, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			g := newGenerator(uint64(k)+201, kind.weighted, kind.lenient)
			g.lasts = kind.lasts
			for range 3000 {
				in := g.input()
				g.heavyTail(&in)
				placeByWeight(t, in)
			}
		})
	}
}

func TestFillByWeightGivesTheSameResultForTheSameInputInAnyOrder(t *testing.T) {
	g := newGenerator(211, true, true)
	for i := range 3000 {
		g.lasts = i%2 == 1
		in := g.input()
		g.heavyTail(&in)
		in.Fill = FillByWeight
		want := Place(in)
		for range 3 {
			shuffled := g.shuffled(in)
			shuffled.Fill = FillByWeight
			if got := Place(shuffled); !reflect.DeepEqual(got, want) {
				t.Fatalf("reordered input placed differently\ninput: %s\ngot:  %+v\nwant: %+v", describe(in), got, want)
			}
		}
	}
}

// TestFillByWeightMovesNothingWhenFedItsOwnResult: a result within the
// balanced capacity is a fixed point. A result whose capacity had to be
// raised can move targets when fed back, at the lower bound: the placement
// looks again for the lowest capacity at which every target has room, from a
// current assignment that now fits within the raised one, and may find a
// lower one. The capacity then never goes up, and a fixed point comes within
// a few feeds.
func TestFillByWeightMovesNothingWhenFedItsOwnResult(t *testing.T) {
	g := newGenerator(212, true, false)
	raised, feeds := 0, map[int]int{}
	for range 3000 {
		in := g.input()
		g.heavyTail(&in)
		in.Fill = FillByWeight
		r := placeByWeight(t, in)
		n := normalize(in)
		total, heaviest := 0, 0
		for _, w := range n.weights {
			total += w
			heaviest = max(heaviest, w)
		}
		automatic := in.PodCapacity <= 0 && len(n.pods) > 0 && len(n.names) > 0
		if automatic && r.Capacity > referenceBalancedCapacity(n, total, heaviest) {
			raised++
		}
		for feed := 1; ; feed++ {
			in.Current = r.Assignments
			again := placeByWeight(t, in)
			if again.Capacity > r.Capacity {
				t.Fatalf("fed back, the capacity rose from %d to %d\ninput: %s", r.Capacity, again.Capacity, describe(in))
			}
			if len(again.Moves) == 0 {
				feeds[feed-1]++
				break
			}
			switch {
			case !automatic || again.Capacity >= r.Capacity:
				t.Fatalf("placing a result again moved %v without a raised capacity to come down from (%d, then %d)\ninput: %s", again.Moves, r.Capacity, again.Capacity, describe(in))
			case feed == 10:
				t.Fatalf("no fixed point after 10 feeds\ninput: %s", describe(in))
			}
			r = again
		}
	}
	t.Logf("%d of 3000 results had a raised capacity; feeds that moved targets before a fixed point: %v", raised, feeds)
}

// TestFillByWeightMovesTheLowerBoundAcrossChangeSequences feeds each result
// back as the next current assignment while pods, podCapacity, weights and
// targets change, one at a time, as between two reconciles. Every step keeps
// every guarantee, moves included: exactly the lower bound in targets, and in
// units at least every pod's excess and less than that plus its heaviest
// shed target.
func TestFillByWeightMovesTheLowerBoundAcrossChangeSequences(t *testing.T) {
	changes := map[string]int{}
	for seq := range 300 {
		g := newGenerator(uint64(3000+seq), true, false)
		in := g.input()
		g.heavyTail(&in)
		for range 30 {
			r := placeByWeight(t, in)
			in.Current = r.Assignments
			changes[g.changeByWeight(&in)]++
		}
	}
	t.Logf("changes: %v", changes)
}

// changeByWeight changes one thing, weights and capacity included, and says
// what.
func (g *generator) changeByWeight(in *Input) string {
	switch g.rng.IntN(9) {
	case 0, 1, 2: // a target's weight changes: ten times heavier, lighter, or anything
		if len(in.Targets) == 0 {
			return "none"
		}
		t := &in.Targets[g.rng.IntN(len(in.Targets))]
		w := max(t.Weight, 1)
		switch g.rng.IntN(3) {
		case 0:
			t.Weight = min(10*w, 640)
		case 1:
			t.Weight = max(w/10, 1)
		default:
			t.Weight = paretoWeight(g.rng, 1.2, 64)
		}
		return "weight"
	case 3: // many weights wander by up to ±30 %
		for i := range in.Targets {
			w := float64(max(in.Targets[i].Weight, 1))
			in.Targets[i].Weight = max(1, int(math.Round(w*(0.7+0.6*g.rng.Float64()))))
		}
		return "weights wander"
	case 4: // podCapacity changes, or goes back to automatic
		in.PodCapacity = 0
		if g.rng.IntN(3) > 0 {
			in.PodCapacity = 1 + g.rng.IntN(120)
		}
		return "podCapacity"
	default:
		g.step(in)
		if in.Targets != nil && len(in.Targets) > 0 && in.Targets[len(in.Targets)-1].Weight == 0 && g.rng.IntN(2) == 0 {
			in.Targets[len(in.Targets)-1].Weight = paretoWeight(g.rng, 1.2, 64)
		}
		return "pods or targets"
	}
}

// TestFillByWeightLowerBoundIsTheFewestMovesOfAnyPlacement tries every
// placement of small weighted inputs and checks that Place with FillByWeight
// moves exactly as few targets as the best of them.
func TestFillByWeightLowerBoundIsTheFewestMovesOfAnyPlacement(t *testing.T) {
	g := newGenerator(213, true, false)
	for range 600 {
		in := g.input()
		in.Pods = ordinals(1 + g.rng.IntN(3))
		if len(in.Targets) > 6 {
			in.Targets = in.Targets[:6]
		}
		for i := range in.Targets {
			if g.rng.IntN(3) == 0 {
				in.Targets[i].Weight = 1 + g.rng.IntN(12)
			}
		}
		r := placeByWeight(t, in)
		if fewest := fewestMovesByExhaustion(in, r.Capacity); fewest != len(r.Moves) {
			t.Fatalf("%d moves, fewest possible %d\ninput: %s", len(r.Moves), fewest, describe(in))
		}
	}
}

// TestFillByWeightAgreesWithTheReferenceWhenCrowdedPodsShed covers pods that
// hold hundreds of weighted targets and must shed many of them.
func TestFillByWeightAgreesWithTheReferenceWhenCrowdedPodsShed(t *testing.T) {
	rng := rand.New(rand.NewPCG(221, 221))
	for round := range 60 {
		in := Input{Pods: ordinals(1 + rng.IntN(5)), Current: map[string]int{}}
		if round%2 == 0 {
			in.PodCapacity = 1 + rng.IntN(600)
		}
		for i := range 100 + rng.IntN(400) {
			name := fmt.Sprintf("crowd/t%d", i)
			in.Targets = append(in.Targets, Target{Name: name, Weight: paretoWeight(rng, 1.2, 64)})
			in.Current[name] = rng.IntN(2)
		}
		placeByWeight(t, in)
	}
}
