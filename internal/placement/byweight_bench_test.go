package placement

import (
	"math/rand/v2"
	"testing"
)

var benchWeightedCache = map[int][]Target{}

// benchWeightedTargets are benchTargets(n), the same names in the same order,
// with weights from a Pareto mix (alpha 1.2, capped at 64).
func benchWeightedTargets(n int) []Target {
	if targets, ok := benchWeightedCache[n]; ok {
		return targets
	}
	targets := cloneTargets(benchTargets(n))
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	for i := range targets {
		targets[i].Weight = paretoWeight(rng, 1.2, 64)
	}
	benchWeightedCache[n] = targets
	return targets
}

// BenchmarkPlaceByWeight measures FillByWeight on the inputs of
// BenchmarkPlace with Pareto weights, under the same sub-benchmark names, so
// that one run gives the ratio to the unweighted placement: a fresh
// placement on P pods, a rescale to P+1 and a steady reconcile from it, and
// a reweigh where a tenth of a percent of the targets become ten times
// heavier.
func BenchmarkPlaceByWeight(b *testing.B) {
	for _, size := range benchSizes {
		targets := func() []Target { return benchWeightedTargets(size.targets) }
		b.Run("fresh/"+size.name, func(b *testing.B) {
			in := Input{Pods: ordinals(size.pods), Targets: targets(), Fill: FillByWeight}
			b.ReportAllocs()
			for b.Loop() {
				Place(in)
			}
		})
		for _, step := range steps {
			b.Run(step.name+size.name, func(b *testing.B) {
				before := Place(Input{Pods: ordinals(size.pods), Targets: targets(), Fill: FillByWeight})
				in := Input{Pods: ordinals(size.pods + step.extraPods), Targets: targets(), Current: before.Assignments, Fill: FillByWeight}
				b.ReportAllocs()
				for b.Loop() {
					Place(in)
				}
			})
		}
		b.Run("reweigh/"+size.name, func(b *testing.B) {
			before := Place(Input{Pods: ordinals(size.pods), Targets: targets(), Fill: FillByWeight})
			heavier := cloneTargets(targets())
			for i := 0; i < len(heavier); i += 1000 {
				heavier[i].Weight = min(10*heavier[i].Weight, MaxWeight)
			}
			in := Input{Pods: ordinals(size.pods), Targets: heavier, Current: before.Assignments, Fill: FillByWeight}
			b.ReportAllocs()
			for b.Loop() {
				Place(in)
			}
		})
	}
}
