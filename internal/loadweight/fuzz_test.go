package loadweight

import (
	"fmt"
	"math"
	"math/bits"
	"testing"
	"time"
)

// FuzzMeter drives a Meter with arbitrary scrapes and weighs: counters that rise, reset and jump, pods that
// come and go, targets that appear and leave, clocks that stall. Whatever it is fed, every named target gets
// a weight of at least 1; a measured weight is a power of two within the cap (or the declared weight it
// confirmed); a rate is finite and not negative, and zero exactly when the weight was never measured; the
// cached rates equal rates computed afresh.
func FuzzMeter(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{255, 0, 255, 0, 128, 64, 32, 16, 8, 4, 2, 1, 0, 0, 0, 0, 9, 9, 9})
	f.Add([]byte("a tenfold rise, a reset and a move"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		m := NewMeter(Settings{Window: 2 * time.Minute, Hysteresis: time.Minute, MaxWeight: 1 + int(len(ops)%70)})
		now := t0
		declared := map[string]int{}
		counts := map[string]float64{}
		for len(ops) >= 3 {
			op, a, b := ops[0], ops[1], ops[2]
			ops = ops[3:]
			target := fmt.Sprintf("t%d", a%6)
			pod := fmt.Sprintf("p%d", b%3)
			switch op % 4 {
			case 0: // time passes
				now = now.Add(time.Duration(a) * time.Second)
			case 1: // a counter rises (or resets, when b is small)
				if b < 16 {
					counts[pod+target] = float64(b)
				} else {
					counts[pod+target] += math.Pow(2, float64(b%40))
				}
				m.Observe(pod, now, map[string]float64{target: counts[pod+target]})
			case 2: // a target is declared (0 removes it)
				if b%5 == 0 {
					delete(declared, target)
				} else {
					declared[target] = int(b % 9)
				}
			case 3:
				weigh(t, m, now, declared)
			}
		}
		weigh(t, m, now, declared)
	})
}

func weigh(t *testing.T, m *Meter, now time.Time, declared map[string]int) {
	t.Helper()
	var targets []Target
	for name, d := range declared {
		targets = append(targets, Target{Name: name, Declared: d})
	}
	got := m.Weigh(now, targets)
	if len(got.ByTarget) != len(targets) {
		t.Fatalf("%d weights for %d targets", len(got.ByTarget), len(targets))
	}
	if got.Typical < 0 || math.IsNaN(got.Typical) || math.IsInf(got.Typical, 0) {
		t.Fatalf("typical rate %v", got.Typical)
	}
	for _, target := range targets {
		cached, cachedOK := m.cachedRateOf(target.Name)
		fresh, freshOK := m.rate(target.Name)
		if cached != fresh && !(math.IsNaN(cached) && math.IsNaN(fresh)) || cachedOK != freshOK {
			t.Fatalf("%s: cached rate %v %v, computed afresh %v %v", target.Name, cached, cachedOK, fresh, freshOK)
		}
	}
	for _, c := range got.Changed {
		if c.From == c.To || got.ByTarget[c.Target].Value != c.To || got.ByTarget[c.Target].Source != Measured {
			t.Fatalf("change %+v, weight now %+v", c, got.ByTarget[c.Target])
		}
	}
	for _, target := range targets {
		w := got.ByTarget[target.Name]
		if w.Value < 1 || w.Rate < 0 || math.IsNaN(w.Rate) || math.IsInf(w.Rate, 0) {
			t.Fatalf("%s weighs %+v", target.Name, w)
		}
		switch w.Source {
		case Declared:
			if w.Value != max(target.Declared, 1) {
				t.Fatalf("%s weighs %+v, declared %d", target.Name, w, target.Declared)
			}
		case Measured:
			confirmed := w.Value == max(target.Declared, 1)
			power := bits.OnesCount(uint(w.Value)) == 1 || w.Value == m.settings.MaxWeight
			if !confirmed && (!power || w.Value > m.settings.MaxWeight) || w.Rate == 0 {
				t.Fatalf("%s weighs %+v, cap %d, declared %d", target.Name, w, m.settings.MaxWeight, target.Declared)
			}
		default:
			t.Fatalf("%s weighs %+v: no source", target.Name, w)
		}
	}
}
