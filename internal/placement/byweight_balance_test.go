package placement

import (
	"fmt"
	"testing"
)

// fleetRatios are a placement's loads, measured with the real weights,
// against the mean and the heaviest target.
type fleetRatios struct {
	maxLoad, heaviest int
	mean              float64
}

// ratio is max pod load / mean pod load.
func (f fleetRatios) ratio() float64 { return float64(f.maxLoad) / f.mean }

// goalRatio is max pod load / max(mean pod load, heaviest target): the
// measure of the balance goal, as no pod can hold less than the heaviest
// target.
func (f fleetRatios) goalRatio() float64 {
	return float64(f.maxLoad) / max(f.mean, float64(f.heaviest))
}

// ratiosOf measures r's loads with the weights of targets, whatever weights
// r was placed with.
func ratiosOf(targets []Target, pods int, r Result) fleetRatios {
	weights := make(map[string]int, len(targets))
	f := fleetRatios{}
	total := 0
	for _, t := range targets {
		weights[t.Name] = t.weight()
		total += t.weight()
		f.heaviest = max(f.heaviest, t.weight())
	}
	load := map[int]int{}
	for name, o := range r.Assignments {
		load[o] += weights[name]
	}
	for _, l := range load {
		f.maxLoad = max(f.maxLoad, l)
	}
	f.mean = float64(total) / float64(pods)
	return f
}

// byCount is the fleet with every weight 1: placing by count.
func byCount(targets []Target) []Target {
	out := make([]Target, len(targets))
	for i, t := range targets {
		out[i] = Target{Name: t.Name}
	}
	return out
}

// paretoFleets are the fleets of the balance goal.
var paretoFleets = []struct {
	name                  string
	targets, pods, capped int
}{
	{"1,000 targets on 10 pods, cap 64", 1_000, 10, 64},
	{"1,000 targets on 10 pods, cap 256", 1_000, 10, 256},
	{"100,000 targets on 100 pods, cap 64", 100_000, 100, 64},
}

// TestFillByWeightBalancesAParetoFleet checks the balance goal on fleets
// whose weights follow a Pareto mix (alpha 1.2): placed from scratch with
// FillByWeight, no pod's load exceeds 1.05 × max(mean load, heaviest
// target), for every one of 20 fleets drawn with different seeds. It logs,
// on the same fleets, placing by count (every weight 1, loads measured with
// the weights) and FillByName with the weights.
func TestFillByWeightBalancesAParetoFleet(t *testing.T) {
	for _, fleet := range paretoFleets {
		t.Run(fleet.name, func(t *testing.T) {
			seeds := 20
			if fleet.targets > 10_000 {
				seeds = 3
			}
			var count, byName, byWeight spread
			for seed := range seeds {
				targets := paretoFleet(fleet.targets, 1.2, fleet.capped, uint64(seed))
				pods := ordinals(fleet.pods)
				count.add(ratiosOf(targets, fleet.pods, Place(Input{Pods: pods, Targets: byCount(targets)})))
				byName.add(ratiosOf(targets, fleet.pods, Place(Input{Pods: pods, Targets: targets})))
				r := Place(Input{Pods: pods, Targets: targets, Fill: FillByWeight})
				f := ratiosOf(targets, fleet.pods, r)
				byWeight.add(f)
				if f.goalRatio() > 1.05 {
					t.Errorf("seed %d: max load %d = %.3f × max(mean %.1f, heaviest %d), above 1.05 (capacity %d)", seed, f.maxLoad, f.goalRatio(), f.mean, f.heaviest, r.Capacity)
				}
			}
			t.Logf("max/mean over %d fleets (seed 0, then min–max): by count %s; FillByName %s; FillByWeight %s (max/max(mean, heaviest) %s)",
				seeds, count.ratios(), byName.ratios(), byWeight.ratios(), byWeight.goalRatios())
		})
	}
}

// spread collects the ratios of several fleets.
type spread struct{ fleets []fleetRatios }

func (s *spread) add(f fleetRatios) { s.fleets = append(s.fleets, f) }

func (s *spread) ratios() string     { return s.describe(fleetRatios.ratio) }
func (s *spread) goalRatios() string { return s.describe(fleetRatios.goalRatio) }

func (s *spread) describe(of func(fleetRatios) float64) string {
	lo, hi := of(s.fleets[0]), of(s.fleets[0])
	for _, f := range s.fleets {
		lo, hi = min(lo, of(f)), max(hi, of(f))
	}
	return fmt.Sprintf("%.3f (%.3f–%.3f)", of(s.fleets[0]), lo, hi)
}
