package placement

import (
	"fmt"
	"maps"
	"testing"
)

// reconcileByWeight is reconcile with FillByWeight.
func reconcileByWeight(t *testing.T, in Input, up []int, desired int) Input {
	t.Helper()
	in.Pods = up
	r := placeByWeight(t, in)
	in.Last = Lasts(in, r, func(o int) bool { return o < desired })
	in.Current = r.Assignments
	return in
}

// TestAFleetPlacedByWeightAndRestartedPodByPodEndsWhereItWas: with
// FillByWeight and Pareto weights too, every target ends on the pod it was
// on before the restart, whatever order the pods come back in, with
// automatic and fixed capacity.
func TestAFleetPlacedByWeightAndRestartedPodByPodEndsWhereItWas(t *testing.T) {
	orders := map[string][][]int{
		"in ordinal order":    {{0}, {0, 1}, {0, 1, 2}},
		"in reverse order":    {{2}, {1, 2}, {0, 1, 2}},
		"two, then the third": {{0, 2}, {0, 1, 2}},
		"all at once":         {{0, 1, 2}},
		"one, gone, then all": {{1}, {}, {0, 1, 2}},
		"one flapping":        {{0}, {0, 1}, {0}, {0, 1, 2}},
	}
	fleets := map[string][]Target{
		"weight 1":   names("fleet/t", 300),
		"weight 1-2": weighted("fleet/t", repeat([]int{1, 2}, 150)...),
		"Pareto":     paretoFleet(300, 1.2, 64, 5),
	}
	for fleetName, targets := range fleets {
		total := 0
		for _, tg := range targets {
			total += tg.weight()
		}
		for _, capacity := range []int{0, total / 3 * 3 / 2} {
			for name, order := range orders {
				t.Run(fmt.Sprintf("%s, capacity %d, %s", fleetName, capacity, name), func(t *testing.T) {
					in := reconcileByWeight(t, Input{PodCapacity: capacity, Targets: targets}, []int{0, 1, 2}, 3)
					before := maps.Clone(in.Current)
					if len(before) != len(targets) {
						t.Fatalf("%d of %d targets placed before the restart", len(before), len(targets))
					}
					in = reconcileByWeight(t, in, nil, 0) // replicas: 0
					for _, up := range order {
						in = reconcileByWeight(t, in, up, 3)
					}
					in = reconcileByWeight(t, in, []int{0, 1, 2}, 3)
					moved := 0
					for name, o := range before {
						if in.Current[name] != o {
							moved++
						}
					}
					if moved != 0 || len(in.Last) != 0 {
						t.Fatalf("%d of %d targets ended elsewhere than before the restart; %d still wait for their pod", moved, len(targets), len(in.Last))
					}
				})
			}
		}
	}
}

func repeat(pattern []int, times int) []int {
	var out []int
	for range times {
		out = append(out, pattern...)
	}
	return out
}
