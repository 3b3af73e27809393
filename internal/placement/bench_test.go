package placement

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/placement/baseline"
)

// benchSizes are targets × pods. BenchmarkPlace and BenchmarkBaseline use the
// same names and the same inputs so that one run gives the ratio.
var benchSizes = []struct {
	name          string
	targets, pods int
}{
	{"1kx10", 1_000, 10},
	{"10kx50", 10_000, 50},
	{"100kx100", 100_000, 100},
	{"1Mx1000", 1_000_000, 1_000},
}

// hugeBaseline, when set in the environment, runs the baseline at 1M×1000.
const hugeBaseline = "PLACEMENT_BENCH_HUGE_BASELINE"

var benchTargetCache = map[int][]Target{}

// benchTargets returns n realistic "namespace/name" targets in a shuffled
// order, the same on every call.
func benchTargets(n int) []Target {
	if targets, ok := benchTargetCache[n]; ok {
		return targets
	}
	targets := make([]Target, n)
	for i := range targets {
		targets[i] = Target{Name: fmt.Sprintf("dc%02d/router-%07d", i%40, i)}
	}
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	rng.Shuffle(n, func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
	benchTargetCache[n] = targets
	return targets
}

func benchNames(n int) []string {
	targets := benchTargets(n)
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Name
	}
	return names
}

// steps are the placements measured after a fresh one: a rescale from P to
// P+1 pods, and a steady reconcile where nothing changed (every target stays).
var steps = []struct {
	name      string
	extraPods int
}{{"rescale/", 1}, {"steady/", 0}}

// BenchmarkPlace measures, with automatic capacity, a fresh placement on P
// pods, each of steps with the fresh result as the current assignment, and
// the placement after a full restart (the fresh result as the last pods).
func BenchmarkPlace(b *testing.B) {
	for _, size := range benchSizes {
		b.Run("fresh/"+size.name, func(b *testing.B) {
			in := Input{Pods: ordinals(size.pods), Targets: benchTargets(size.targets)}
			b.ReportAllocs()
			for b.Loop() {
				Place(in)
			}
		})
		for _, step := range steps {
			b.Run(step.name+size.name, func(b *testing.B) {
				targets := benchTargets(size.targets)
				before := Place(Input{Pods: ordinals(size.pods), Targets: targets})
				in := Input{Pods: ordinals(size.pods + step.extraPods), Targets: targets, Current: before.Assignments}
				b.ReportAllocs()
				for b.Loop() {
					Place(in)
				}
			})
		}
		// After a full restart every target is unassigned with its last pod, and every pod is back.
		b.Run("restart/"+size.name, func(b *testing.B) {
			targets := benchTargets(size.targets)
			before := Place(Input{Pods: ordinals(size.pods), Targets: targets})
			in := Input{Pods: ordinals(size.pods), Targets: targets, Last: before.Assignments}
			b.ReportAllocs()
			for b.Loop() {
				Place(in)
			}
		})
	}
}

// BenchmarkBaseline measures the public gNMIc operator's placement on the
// same inputs as BenchmarkPlace.
func BenchmarkBaseline(b *testing.B) {
	for _, size := range benchSizes {
		skipHuge := func(b *testing.B) {
			if size.targets*size.pods > 100_000_000 && os.Getenv(hugeBaseline) == "" {
				b.Skipf("the baseline needs minutes per placement at %s (a fmt+FNV score and a sort of all pods per target); set %s=1 to run it", size.name, hugeBaseline)
			}
		}
		b.Run("fresh/"+size.name, func(b *testing.B) {
			skipHuge(b)
			names := benchNames(size.targets)
			b.ReportAllocs()
			for b.Loop() {
				baseline.Place(names, size.pods, 0, nil)
			}
		})
		for _, step := range steps {
			b.Run(step.name+size.name, func(b *testing.B) {
				skipHuge(b)
				names := benchNames(size.targets)
				before := baseline.Place(names, size.pods, 0, nil)
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					current := cloneAssignment(before) // the baseline sorts it in place
					b.StartTimer()
					baseline.Place(names, size.pods+step.extraPods, 0, current)
				}
			})
		}
	}
}

func cloneAssignment(a baseline.Assignment) baseline.Assignment {
	out := make(baseline.Assignment, len(a))
	for pod, names := range a {
		out[pod] = append([]string(nil), names...)
	}
	return out
}
