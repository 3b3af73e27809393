package fakecollector

import (
	"math"
	"math/rand/v2"
)

// ParetoRates returns n response rates whose ratios to scale follow a Pareto distribution of shape alpha,
// capped at maxRatio: most targets answer about scale responses per second, a few many times that. With
// alpha 1.2 and a cap of 64 this is the heavy-tailed mix of issue 31 (a spine streaming thousands of paths
// beside leaves sending a few counters). The same seed gives the same rates.
func ParetoRates(n int, alpha, scale, maxRatio float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rates := make([]float64, n)
	for i := range rates {
		u := 1 - rng.Float64() // in (0, 1]
		rates[i] = scale * min(math.Pow(u, -1/alpha), maxRatio)
	}
	return rates
}
