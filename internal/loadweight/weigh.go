package loadweight

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Source says where a weight comes from.
type Source string

const (
	// Declared: the target's declared weight, as no measurement has yet moved it (the target is not
	// measured yet, or its rate stayed within the band of its declared weight, or has not left it for long
	// enough).
	Declared Source = "Declared"
	// Measured: the weight followed the target's measured rate.
	Measured Source = "Measured"
)

// Weight is a target's weight and why.
type Weight struct {
	// Value is the weight in placement units.
	Value int
	// Source says whether Value is the declared weight or a measured one.
	Source Source
	// Rate is the target's measured responses per second, 0 while it is not measured.
	Rate float64
}

// Target is what Weigh needs of a target.
type Target struct {
	Name string
	// Declared is the target's declared weight (values below 1 mean 1).
	Declared int
	// Reported is the weight last reported for the target (in its status), which a Meter that does not
	// know the target yet starts from, so that an operator restart keeps measured weights. Zero: none.
	Reported Weight
}

// Weights are the result of a Weigh.
type Weights struct {
	// ByTarget is every named target's weight.
	ByTarget map[string]Weight
	// Typical is the median rate of the measured targets, 0 when none is.
	Typical float64
	// Changed are the targets whose weight followed their measured rate in this Weigh, by name.
	Changed []Change
}

// Change is a weight that followed its measured rate.
type Change struct {
	Target   string
	From, To int
	Rate     float64
}

// bandWidth is how far, in powers of two, a ratio may stray from its weight before the weight follows:
// the rounding's half power plus a power for rates that wander (a factor 1.86 between +30 % and -30 %).
const bandWidth = 1.5

// Weigh decides the weight of every named target at now and forgets the targets not named.
func (m *Meter) Weigh(now time.Time, targets []Target) Weights {
	m.prune(now)
	named := make(map[string]bool, len(targets))
	rates := make(map[string]float64, len(targets))
	var measured []float64
	for _, t := range targets {
		named[t.Name] = true
		if r, ok := m.cachedRateOf(t.Name); ok && r > 0 {
			rates[t.Name] = r
			measured = append(measured, r)
		}
	}
	m.forgetAllBut(named)
	typical := median(measured)

	weights := Weights{ByTarget: make(map[string]Weight, len(targets)), Typical: typical}
	for _, t := range targets {
		h := m.holding(t)
		if rate, ok := rates[t.Name]; ok {
			if from := h.Value; m.follow(h, rate/typical, rate, now) {
				weights.Changed = append(weights.Changed, Change{Target: t.Name, From: from, To: h.Value, Rate: rate})
			}
		} else {
			h.outsideSince = time.Time{}
		}
		weights.ByTarget[t.Name] = h.Weight
	}
	slices.SortFunc(weights.Changed, func(a, b Change) int { return strings.Compare(a.Target, b.Target) })
	return weights
}

// holding returns the weight the target holds, starting it from the reported or declared weight. A held
// declared weight follows the declaration.
func (m *Meter) holding(t Target) *held {
	declared := max(t.Declared, 1)
	h, ok := m.held[t.Name]
	switch {
	case !ok && t.Reported.Value > 0:
		h = &held{Weight: t.Reported}
		if h.Source != Measured {
			h.Weight = Weight{Value: declared, Source: Declared}
		}
	case !ok:
		h = &held{Weight: Weight{Value: declared, Source: Declared}}
	case h.Source == Declared:
		h.Value = declared
	}
	m.held[t.Name] = h
	return h
}

// follow applies a measured ratio to a held weight: inside the band the weight holds (and is now
// confirmed by the measurement); outside it for Hysteresis, it becomes the ratio's weight. The band of a
// weight not yet measured is narrow, the ratios that round to it: a declared weight is confirmed only by
// a measurement that agrees, so that the wide band of a measured weight always has the rounding's error
// at most, and rates that wander do not move it. It reports whether the weight's value changed.
func (m *Meter) follow(h *held, ratio, rate float64, now time.Time) (changed bool) {
	h.Rate = rate
	inBand := m.inBand(h.Value, ratio)
	if h.Source != Measured {
		inBand = Quantize(ratio, m.settings.MaxWeight) == h.Value
	}
	if inBand {
		h.outsideSince = time.Time{}
		h.Source = Measured
		return false
	}
	if h.outsideSince.IsZero() {
		h.outsideSince = now
	}
	if now.Sub(h.outsideSince) < m.settings.Hysteresis {
		return false
	}
	from := h.Value
	h.Value, h.Source, h.outsideSince = Quantize(ratio, m.settings.MaxWeight), Measured, time.Time{}
	return h.Value != from
}

// inBand reports whether ratio is close enough to weight for the weight to hold: within bandWidth powers
// of two, or beyond the bounds of weights on the side the weight already sits at.
func (m *Meter) inBand(weight int, ratio float64) bool {
	if weight <= 1 && ratio <= 1 || weight >= m.settings.MaxWeight && ratio >= float64(m.settings.MaxWeight) {
		return true
	}
	return math.Abs(math.Log2(ratio)-math.Log2(float64(weight))) <= bandWidth
}

// Quantize is the weight of a ratio to the typical rate: the nearest power of two (in log scale), at least
// 1 and at most maxWeight.
func Quantize(ratio float64, maxWeight int) int {
	if !(ratio > 1) { // NaN included
		return 1
	}
	exp := math.Round(math.Log2(ratio))
	if exp >= 62 || math.Pow(2, exp) >= float64(maxWeight) {
		return max(maxWeight, 1)
	}
	return 1 << int(exp)
}

// forgetAllBut drops the samples and weights of every target not named.
func (m *Meter) forgetAllBut(named map[string]bool) {
	for target := range m.series {
		if !named[target] {
			delete(m.series, target)
		}
	}
	for target := range m.held {
		if !named[target] {
			delete(m.held, target)
		}
	}
	for target := range m.rates {
		if !named[target] {
			delete(m.rates, target)
		}
	}
	for target := range m.stale {
		if !named[target] {
			delete(m.stale, target)
		}
	}
}

// median of rates, 0 for none.
func median(rates []float64) float64 {
	if len(rates) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(rates))
	mid := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[mid]
	}
	return (sorted[mid-1] + sorted[mid]) / 2
}
