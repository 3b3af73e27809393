package placement

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// churnStep is one change to a fleet between two placements.
type churnStep struct {
	name   string
	change func(in *Input, rng *rand.Rand)
}

var churnSteps = []churnStep{
	{"10 → 11 pods", func(in *Input, _ *rand.Rand) { in.Pods = ordinals(11) }},
	{"11 → 10 pods", func(in *Input, _ *rand.Rand) { in.Pods = ordinals(10) }},
	{"pod 3 gone", func(in *Input, _ *rand.Rand) { in.Pods = dropOrdinal(ordinals(10), 3) }},
	{"pod 3 back", func(in *Input, _ *rand.Rand) { in.Pods = ordinals(10) }},
	{"heaviest pod's lightest target 10× heavier", func(in *Input, _ *rand.Rand) {
		t := lightestOnFullestPod(in)
		t.Weight = 10 * t.weight()
	}},
	{"a weight-64 target 10× lighter", func(in *Input, _ *rand.Rand) {
		for i := range in.Targets {
			if in.Targets[i].weight() == 64 {
				in.Targets[i].Weight = 6
				return
			}
		}
	}},
	{"every weight ±30 %", func(in *Input, rng *rand.Rand) {
		for i := range in.Targets {
			w := float64(in.Targets[i].weight())
			in.Targets[i].Weight = max(1, int(math.Round(w*(0.7+0.6*rng.Float64()))))
		}
	}},
	{"podCapacity 420", func(in *Input, _ *rand.Rand) { in.PodCapacity = 420 }},
	{"podCapacity automatic", func(in *Input, _ *rand.Rand) { in.PodCapacity = 0 }},
	{"50 new targets", func(in *Input, rng *rand.Rand) {
		for i := range 50 {
			in.Targets = append(in.Targets, Target{Name: fmt.Sprintf("new/router-%03d", i), Weight: paretoWeight(rng, 1.2, 64)})
		}
	}},
}

// lightestOnFullestPod is the lightest target on the most loaded pod of the
// current assignment (the alphabetically first of equal weights).
func lightestOnFullestPod(in *Input) *Target {
	load := map[int]int{}
	for _, t := range in.Targets {
		if o, ok := in.Current[t.Name]; ok {
			load[o] += t.weight()
		}
	}
	fullest := -1
	for o, l := range load {
		if fullest < 0 || l > load[fullest] || (l == load[fullest] && o < fullest) {
			fullest = o
		}
	}
	var lightest *Target
	for i := range in.Targets {
		t := &in.Targets[i]
		if o, ok := in.Current[t.Name]; ok && o == fullest && (lightest == nil || t.weight() < lightest.weight() || (t.weight() == lightest.weight() && t.Name < lightest.Name)) {
			lightest = t
		}
	}
	return lightest
}

// TestFillByWeightChurnOnAParetoFleet takes the 1,000-target Pareto fleet
// through scaling, a lost pod, weight changes, podCapacity and new targets,
// feeding each result back, and checks at every step that FillByWeight moves
// exactly the lower bound in targets and, in units, at least every pod's
// excess. It logs the figures of docs/placement.md, beside FillByName.
func TestFillByWeightChurnOnAParetoFleet(t *testing.T) {
	var table strings.Builder
	fmt.Fprintln(&table, "| change | ByWeight moves (lower bound) | units moved (lower bound) | max/mean | ByName moves (lower bound) | units moved | max/mean |")
	fmt.Fprintln(&table, "|---|---:|---:|---:|---:|---:|---:|")
	rng := rand.New(rand.NewPCG(7, 7))
	weighted := Input{Pods: ordinals(10), Targets: paretoFleet(1_000, 1.2, 64, 0), Fill: FillByWeight}
	first := placeByWeight(t, weighted)
	weighted.Current = first.Assignments
	named := Input{Pods: ordinals(10), Targets: cloneTargets(weighted.Targets), Current: first.Assignments}
	for _, step := range churnSteps {
		seed := rng.Uint64()
		step.change(&weighted, rand.New(rand.NewPCG(seed, 1)))
		step.change(&named, rand.New(rand.NewPCG(seed, 1)))
		w := placeByWeight(t, weighted)
		n := Place(named)
		wu, nu := movedUnits(normalize(weighted), w), movedUnits(normalize(named), n)
		if wu.moved < wu.lowerBound {
			t.Fatalf("%s: %d units moved, below the lower bound %d", step.name, wu.moved, wu.lowerBound)
		}
		fmt.Fprintf(&table, "| %s | %d (%d) | %d (%d) | %.3f | %d (%d) | %d | %.3f |\n", step.name,
			len(w.Moves), w.LowerBoundMoves, wu.moved, wu.lowerBound, ratiosOf(weighted.Targets, len(weighted.Pods), w).ratio(),
			len(n.Moves), n.LowerBoundMoves, nu.moved, ratiosOf(named.Targets, len(named.Pods), n).ratio())
		weighted.Current, named.Current = w.Assignments, n.Assignments
	}
	t.Logf("\n%s", table.String())
}

func cloneTargets(targets []Target) []Target {
	return append([]Target(nil), targets...)
}

// TestFillByWeightChurnWhileWeightsWander measures what the core alone does
// when every weight wanders ±30 % around its mean at every placement, as
// raw measured rates would without quantizing or hysteresis: the share of
// targets moved per placement (each at the lower bound) and the balance.
func TestFillByWeightChurnWhileWeightsWander(t *testing.T) {
	means := paretoFleet(1_000, 1.2, 64, 0)
	in := Input{Pods: ordinals(10), Targets: cloneTargets(means), Fill: FillByWeight}
	in.Current = placeByWeight(t, in).Assignments
	rng := rand.New(rand.NewPCG(8, 8))
	const placements = 50
	moved, worst := 0, 0.0
	for range placements {
		for i, m := range means {
			in.Targets[i].Weight = max(1, int(math.Round(float64(m.weight())*(0.7+0.6*rng.Float64()))))
		}
		r := placeByWeight(t, in)
		moved += len(r.Moves)
		worst = max(worst, ratiosOf(in.Targets, 10, r).ratio())
		in.Current = r.Assignments
	}
	t.Logf("%d placements: %.2f %% of the targets moved per placement on average, max/mean at worst %.3f",
		placements, 100*float64(moved)/float64(placements*len(means)), worst)
}
