package loadweight

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// paretoMeans are n mean rates whose ratios to 1/s follow Pareto(1.2) capped at 64, the heavy-tailed mix
// of issue 31.
func paretoMeans(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	means := make([]float64, n)
	for i := range means {
		means[i] = min(math.Pow(1-rng.Float64(), -1/1.2), 64)
	}
	return means
}

// noise is a deterministic uniform number in [0, 1) for a target at a moment.
func noise(name string, at time.Time) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	_, _ = h.Write([]byte(at.Format(time.RFC3339Nano)))
	x := h.Sum64() // FNV mixes its high bits poorly: finish with splitmix64's mixer
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

func index(name string) int {
	i := 0
	for _, c := range name[1:] {
		i = i*10 + int(c-'0')
	}
	return i
}

// changesOfMeasuredWeights runs the fleet for d and lists the weight changes of targets whose weight was
// already measured.
func changesOfMeasuredWeights(f *fleet, d time.Duration) (changes []string, before Weights) {
	before = f.step()
	for end := f.now.Add(d); f.now.Before(end); {
		now := f.step()
		for name, w := range now.ByTarget {
			if was := before.ByTarget[name]; was.Source == Measured && w.Value != was.Value {
				changes = append(changes, fmt.Sprintf("at %s %s: %+v -> %+v, typical rate %.2f -> %.2f",
					f.now.Sub(t0), name, was, w, before.Typical, now.Typical))
			}
		}
		before = now
	}
	return changes, before
}

func TestPropertyRatesWanderingThirtyPercentChangeNoMeasuredWeight(t *testing.T) {
	for _, wander := range []struct {
		name   string
		factor func(name string, at time.Time) float64
	}{{
		name: "fast: a new rate every 10 s, uniform within ±30 %",
		factor: func(name string, at time.Time) float64 {
			return 0.7 + 0.6*noise(name, at.Truncate(10*time.Second))
		},
	}, {
		name: "slow: ±30 % waves with periods of 1 to 3 hours",
		factor: func(name string, at time.Time) float64 {
			period := time.Hour + time.Duration(noise(name, t0)*float64(2*time.Hour))
			phase := 2 * math.Pi * noise(name, t0.Add(time.Second))
			return 1 + 0.3*math.Sin(2*math.Pi*at.Sub(t0).Seconds()/period.Seconds()+phase)
		},
	}} {
		t.Run(wander.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 2; seed++ {
				means := paretoMeans(1000, seed)
				f := newFleet(Settings{}, 1000, 10, func(name string, at time.Time) float64 {
					return means[index(name)] * wander.factor(name, at)
				})
				f.tick = 20 * time.Second
				steady(f, 3*time.Hour) // every weight measured: declared weights that disagree left
				changes, last := changesOfMeasuredWeights(f, 5*time.Hour)
				if len(changes) != 0 {
					t.Errorf("seed %d: %d measured weights changed in 5 hours of wandering rates, first %s",
						seed, len(changes), changes[0])
				}
				notMeasured := 0
				for _, w := range last.ByTarget {
					if w.Source != Measured {
						notMeasured++
					}
				}
				if notMeasured != 0 {
					t.Errorf("seed %d: %d targets never measured", seed, notMeasured)
				}
			}
		})
	}
}

func TestPropertyATenfoldRiseIsReflectedAfterTheHysteresisAndNotBefore(t *testing.T) {
	settings := Settings{Window: 5 * time.Minute, Hysteresis: 10 * time.Minute, MaxWeight: 64}
	for seed := uint64(1); seed <= 5; seed++ {
		means := paretoMeans(500, seed)
		rng := rand.New(rand.NewPCG(seed, 99))
		risen := map[int]bool{}
		for len(risen) < 10 {
			risen[rng.IntN(len(means))] = true
		}
		var riseAt time.Time
		f := newFleet(settings, len(means), 10, func(name string, at time.Time) float64 {
			i := index(name)
			rate := means[i] * (0.7 + 0.6*noise(name, at.Truncate(10*time.Second)))
			if risen[i] && !riseAt.IsZero() && !at.Before(riseAt) {
				rate *= 10
			}
			return rate
		})
		f.tick = 10 * time.Second
		before := steady(f, time.Hour)
		riseAt = f.now
		changedAt := map[string]time.Time{}
		for f.now.Before(riseAt.Add(settings.Window + settings.Hysteresis + 2*time.Minute)) {
			now := f.step()
			for name, w := range now.ByTarget {
				if _, seen := changedAt[name]; !seen && w.Value != before.ByTarget[name].Value {
					changedAt[name] = f.now
				}
			}
		}
		last := f.step().ByTarget
		for i := range risen {
			name := f.names[i]
			old, got := before.ByTarget[name].Value, last[name].Value
			if old == settings.MaxWeight {
				continue // already as heavy as a weight can be
			}
			at, changed := changedAt[name]
			if !changed {
				t.Errorf("seed %d: %s (weight %d, %.1f/s) still weighs %d after rising tenfold", seed, name, old, means[i], got)
				continue
			}
			if at.Sub(riseAt) < settings.Hysteresis {
				t.Errorf("seed %d: %s changed %s after the rise, before the hysteresis", seed, name, at.Sub(riseAt))
			}
			want := Quantize(10*means[i]/before.Typical, settings.MaxWeight)
			if got < want/2 || got > want*2 {
				t.Errorf("seed %d: %s weighs %d after rising tenfold from %d, want about %d", seed, name, got, old, want)
			}
		}
		for name, at := range changedAt {
			if !risen[index(name)] {
				t.Errorf("seed %d: %s changed weight at %s without rising", seed, name, at.Sub(riseAt))
			}
		}
	}
}
