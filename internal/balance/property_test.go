package balance

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// generator makes random valid inputs of one kind from a fixed seed, so that
// every run checks the same cases.
type generator struct {
	rng      *rand.Rand
	policy   Policy
	fallback bool // a startup timeout, and pods that have waited
	allNamed bool // every target in the order, or with a positive proportion
	large    bool // counts up to MaxReplicas instead of a few dozen
}

func newGenerator(seed uint64, policy Policy) *generator {
	return &generator{rng: rand.New(rand.NewPCG(seed, 0x9E3779B97F4A7C15)), policy: policy}
}

func (g *generator) input() Input {
	in := Input{Policy: g.policy, Replicas: g.count(40)}
	if g.fallback {
		in.StartupTimeout = time.Minute
	}
	for i := range g.rng.IntN(7) {
		t := Target{Name: fmt.Sprintf("zone-%c", 'a'+g.rng.IntN(26)), Proportion: g.count(5)}
		if g.rng.IntN(3) == 0 {
			t.Min = g.count(4)
		}
		if g.rng.IntN(4) > 0 {
			t.Max = new(t.Min + g.count(8))
		}
		if g.allNamed && t.Proportion == 0 {
			t.Proportion = 1
		}
		if g.fallback {
			t.Started, t.NotStarted = g.count(8), g.count(4)
			t.Waiting = []time.Duration{0, 30 * time.Second, time.Minute, 2 * time.Minute, time.Hour}[g.rng.IntN(5)]
		}
		if hasTarget(in.Targets, t.Name) {
			t.Name = fmt.Sprintf("zone-%d", i)
		}
		in.Targets = append(in.Targets, t)
	}
	if in.Policy == Proportional && len(in.Targets) > 0 && !hasProportion(in.Targets) {
		in.Targets[0].Proportion = 1
	}
	for _, i := range g.rng.Perm(len(in.Targets)) {
		if g.allNamed || g.rng.IntN(4) > 0 {
			in.Order = append(in.Order, in.Targets[i].Name)
		}
	}
	return in
}

// count is a random count below n, or below MaxReplicas/8 for large inputs.
func (g *generator) count(n int) int {
	if g.large {
		return g.rng.IntN(MaxReplicas / 8)
	}
	return g.rng.IntN(n)
}

func hasTarget(targets []Target, name string) bool {
	for _, t := range targets {
		if t.Name == name {
			return true
		}
	}
	return false
}

func hasProportion(targets []Target) bool {
	for _, t := range targets {
		if t.Proportion > 0 {
			return true
		}
	}
	return false
}

// kinds are the generators every property runs over.
func kinds(seed uint64) map[string]*generator {
	out := map[string]*generator{}
	for _, policy := range []Policy{Priority, Proportional} {
		for _, fallback := range []bool{false, true} {
			for _, large := range []bool{false, true} {
				g := newGenerator(seed, policy)
				g.fallback, g.large = fallback, large
				out[fmt.Sprintf("%s fallback=%v large=%v", policy, fallback, large)] = g
				seed++
			}
		}
	}
	return out
}

func TestBalanceKeepsEveryGuarantee(t *testing.T) {
	for name, g := range kinds(1) {
		t.Run(name, func(t *testing.T) {
			for range 2000 {
				balance(t, g.input())
			}
		})
	}
}

func TestBalanceSpreadsExactlyTheReplicasBetweenTheSumsOfMinsAndMaxes(t *testing.T) {
	for name, g := range kinds(100) {
		if g.fallback {
			continue
		}
		g.allNamed = true
		t.Run(name, func(t *testing.T) {
			checked := 0
			for range 2000 {
				in := g.input()
				sumMin, sumMax, bounded := 0, 0, true
				for _, tg := range in.Targets {
					sumMin += tg.Min
					if tg.Max == nil {
						bounded = false
					} else {
						sumMax += *tg.Max
					}
				}
				if in.Replicas < sumMin || (bounded && in.Replicas > sumMax) {
					continue
				}
				checked++
				if r := balance(t, in); r.Placed != in.Replicas || r.Unplaced != 0 || r.Excess != 0 {
					t.Fatalf("placed %d (unplaced %d, excess %d) of %d replicas\ninput: %s", r.Placed, r.Unplaced, r.Excess, in.Replicas, describe(in))
				}
			}
			if checked < 200 {
				t.Fatalf("only %d inputs within the bounds", checked)
			}
		})
	}
}

func TestBalanceGivesTheSameResultForTargetsInAnyOrder(t *testing.T) {
	for name, g := range kinds(200) {
		t.Run(name, func(t *testing.T) {
			for range 1000 {
				in := g.input()
				want := balance(t, in)
				shuffled := in
				shuffled.Targets = append([]Target(nil), in.Targets...)
				g.rng.Shuffle(len(shuffled.Targets), func(i, j int) {
					shuffled.Targets[i], shuffled.Targets[j] = shuffled.Targets[j], shuffled.Targets[i]
				})
				if got := balance(t, shuffled); !reflect.DeepEqual(got, want) {
					t.Fatalf("reordered targets balanced differently\ninput: %s\ngot:  %+v\nwant: %+v", describe(in), got, want)
				}
			}
		})
	}
}

// moves compares the desired counts of two results over the same targets:
// the replicas moved in all, and how many targets moved against the
// direction of the change in Placed.
func moves(before, after Result) (moved, against int) {
	change := after.Placed - before.Placed
	for i, a := range after.Targets {
		d := a.Desired - before.Targets[i].Desired
		moved += abs(d)
		if (change >= 0 && d < 0) || (change <= 0 && d > 0) {
			against++
		}
	}
	return moved, against
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// rescaled is in with its replicas changed by k, at least 0.
func rescaled(g *generator, in Input) (Input, int) {
	k := g.rng.IntN(11) - 5
	out := in
	out.Replicas = max(0, in.Replicas+k)
	return out, out.Replicas - in.Replicas
}

func TestPriorityMovesExactlyTheChangeInReplicas(t *testing.T) {
	for name, g := range kinds(300) {
		if g.policy != Priority || g.fallback {
			continue
		}
		t.Run(name, func(t *testing.T) {
			exact := 0
			for range 3000 {
				in := g.input()
				next, k := rescaled(g, in)
				before, after := balance(t, in), balance(t, next)
				moved, against := moves(before, after)
				change := after.Placed - before.Placed
				if against > 0 || moved != abs(change) {
					t.Fatalf("moved %d (%d targets against the change) for a change of %d\ninput: %s", moved, against, change, describe(in))
				}
				if before.Excess == 0 && before.Unplaced == 0 && after.Excess == 0 && after.Unplaced == 0 {
					exact++
					if moved != abs(k) {
						t.Fatalf("moved %d for %+d replicas within the bounds\ninput: %s", moved, k, describe(in))
					}
				}
			}
			if exact < 300 {
				t.Fatalf("only %d changes within the bounds", exact)
			}
		})
	}
}

// TestProportionalMovesAtMostOneReplicaAgainstTheChange checks the bound the
// package documentation states: every target moves with the change or by
// one replica against it, so the targets move |k| + 2·(targets against).
func TestProportionalMovesAtMostOneReplicaAgainstTheChange(t *testing.T) {
	for name, g := range kinds(400) {
		if g.policy != Proportional || g.fallback {
			continue
		}
		t.Run(name, func(t *testing.T) {
			paradoxes := 0
			for range 3000 {
				in := g.input()
				next, _ := rescaled(g, in)
				before, after := balance(t, in), balance(t, next)
				moved, against := moves(before, after)
				change := after.Placed - before.Placed
				for i, a := range after.Targets {
					d := a.Desired - before.Targets[i].Desired
					if (change > 0 && d < -1) || (change < 0 && d > 1) {
						t.Fatalf("%s moved %+d for a change of %+d\ninput: %s", a.Name, d, change, describe(in))
					}
				}
				if moved != abs(change)+2*against || (against > 0 && against >= len(in.Targets)) {
					t.Fatalf("moved %d, %d targets against a change of %+d\ninput: %s", moved, against, change, describe(in))
				}
				if against > 0 {
					paradoxes++
				}
			}
			t.Logf("%d of 3000 changes moved a target against the change", paradoxes)
		})
	}
}

// TestProportionalMinimisesTheLargestDeviationFromTheQuotas tries every
// spread of small inputs and checks that none comes closer to the quotas
// than Balance, for the base and for the fallback's spread.
func TestProportionalMinimisesTheLargestDeviationFromTheQuotas(t *testing.T) {
	for name, g := range kinds(500) {
		if g.policy != Proportional || g.large {
			continue
		}
		t.Run(name, func(t *testing.T) {
			for range 1500 {
				in := g.input()
				// Trying every spread costs about total^targets.
				in.Replicas %= 16
				if len(in.Targets) > 4 {
					in.Targets = in.Targets[:4]
					in.Order = nil
				}
				if !hasProportion(in.Targets) {
					continue
				}
				r := balance(t, in)
				if r.Missing > 8 {
					continue
				}
				checkSmallestDeviation(t, in, in.Replicas, r, nil)
				if r.Missing > 0 {
					checkSmallestDeviation(t, in, in.Replicas+r.Missing, r, r.Targets)
				}
			}
		})
	}
}

func checkSmallestDeviation(t *testing.T, in Input, total int, r Result, fallback []Allocation) {
	t.Helper()
	quotas := referenceQuotas(total, in, fallback)
	lows, highs, qs := make([]int, len(r.Targets)), make([]int, len(r.Targets)), make([]float64, len(r.Targets))
	worst := 0.0
	for i, a := range r.Targets {
		tg := targetNamed(in, a.Name)
		lows[i], highs[i], qs[i] = tg.Min, max(total, tg.Min), quotas[a.Name]
		if tg.Max != nil {
			highs[i] = *tg.Max
		}
		if tg.Proportion == 0 {
			highs[i] = tg.Min
		}
		n := a.Base
		if fallback != nil {
			n = a.Desired
			lows[i] = a.Base
			if a.Blocked {
				highs[i] = a.Base
			}
		}
		worst = max(worst, abs64(float64(n)-qs[i]))
	}
	placed := 0
	for _, a := range r.Targets {
		placed += a.Base
		if fallback != nil {
			placed += a.Replacements
		}
	}
	if best := smallestLargestDeviation(placed, lows, highs, qs); worst > best+tolerance {
		t.Fatalf("largest deviation %.6f, but %.6f is possible (total %d)\ninput: %s\nresult: %+v", worst, best, total, describe(in), r)
	}
}

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestFallbackRemovesEveryReplacementOnceThePodsStart starts every pod of
// inputs with blocked targets and checks that the result is the base again,
// the same as without a timeout.
func TestFallbackRemovesEveryReplacementOnceThePodsStart(t *testing.T) {
	for name, g := range kinds(600) {
		if !g.fallback {
			continue
		}
		t.Run(name, func(t *testing.T) {
			blocked := 0
			for range 2000 {
				in := g.input()
				r := balance(t, in)
				if r.Missing == 0 {
					continue
				}
				blocked++
				started := in
				started.Targets = append([]Target(nil), in.Targets...)
				for i := range started.Targets {
					started.Targets[i].NotStarted = 0
				}
				recovered := balance(t, started)
				for i, a := range recovered.Targets {
					if a.Desired != r.Targets[i].Base || a.Replacements != 0 || a.Blocked {
						t.Fatalf("%s desires %d after recovery, base was %d\ninput: %s", a.Name, a.Desired, r.Targets[i].Base, describe(in))
					}
				}
			}
			if blocked < 200 {
				t.Fatalf("only %d inputs with missing replicas", blocked)
			}
		})
	}
}
