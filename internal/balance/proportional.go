package balance

import (
	"cmp"
	"math/big"
	"slices"
	"sort"
)

// byProportion spreads by the targets' proportions (in name order): see
// apportion.
func byProportion(proportions []int) spreader {
	return func(total int, bounds []limits) []int {
		return apportion(total, bounds, proportions)
	}
}

// apportion gives every target its quota, clamp(level·proportion, min, max)
// with the one level at which the quotas add up to total, rounded to whole
// replicas by largest remainder (ties to the first name).
//
// The quotas are the shares the package documentation describes: while no
// limit binds, every target's quota is total·proportion/Σproportions; a
// target held at a limit drops out and the others share the rest by their
// proportions. Largest remainder rounds every quota to its floor or ceiling
// and so minimises the largest difference between a target's replicas and
// its quota. A target with proportion 0 keeps its minimum.
//
// The arithmetic is exact (math/big): levels and quotas are fractions, and
// comparing two remainders over the same denominator needs no rounding.
func apportion(total int, bounds []limits, proportions []int) []int {
	out, left := minimums(total, bounds)
	if left <= 0 {
		return out
	}
	if capacity, ok := capacityOf(bounds, proportions); ok && total >= capacity {
		for i, l := range bounds {
			if proportions[i] > 0 {
				out[i] = l.max
			}
		}
		return out
	}
	level := waterLevel(total, bounds, proportions)

	type fraction struct {
		index     int
		remainder *big.Int
	}
	var fractions []fraction
	placed := 0
	for i, l := range bounds {
		whole, remainder := quota(level, l, proportions[i])
		out[i] = whole
		placed += whole
		if remainder.Sign() > 0 {
			fractions = append(fractions, fraction{i, remainder})
		}
	}
	slices.SortFunc(fractions, func(a, b fraction) int {
		if c := b.remainder.Cmp(a.remainder); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	// The fractional parts add up to total-placed, so there are at least that
	// many of them.
	for _, f := range fractions[:total-placed] {
		out[f.index]++
	}
	return out
}

// capacityOf is the most the policy can place, and false when a target with a
// positive proportion has no maximum.
func capacityOf(bounds []limits, proportions []int) (int, bool) {
	capacity := 0
	for i, l := range bounds {
		switch {
		case proportions[i] == 0:
			capacity += l.min
		case l.unbounded:
			return 0, false
		default:
			capacity += l.max
		}
	}
	return capacity, true
}

// quota is clamp(level·proportion, min, max) split into its whole part and
// the numerator of its fractional part over level's denominator.
func quota(level *big.Rat, l limits, proportion int) (int, *big.Int) {
	numerator := new(big.Int).Mul(level.Num(), big.NewInt(int64(proportion)))
	denominator := level.Denom()
	if numerator.Cmp(scaled(l.min, denominator)) <= 0 {
		return l.min, new(big.Int)
	}
	if !l.unbounded && numerator.Cmp(scaled(l.max, denominator)) >= 0 {
		return l.max, new(big.Int)
	}
	whole, remainder := new(big.Int).QuoRem(numerator, denominator, new(big.Int))
	return int(whole.Int64()), remainder
}

func scaled(n int, denominator *big.Int) *big.Int {
	return new(big.Int).Mul(big.NewInt(int64(n)), denominator)
}

// waterLevel finds the level at which the quotas add up to total. The caller
// makes sure that total lies strictly between the sum of the minimums and the
// capacity, so the level exists and is unique where it matters.
//
// The sum of the quotas is piecewise linear in the level, with a break where
// a target leaves its minimum or reaches its maximum. waterLevel finds the
// first break at which the sum reaches total; below it, back to the break
// before, every target is held at its minimum, held at its maximum or free,
// so the sum is held + level·(free proportions), which gives the level.
func waterLevel(total int, bounds []limits, proportions []int) *big.Rat {
	var breaks []*big.Rat
	for i, l := range bounds {
		if proportions[i] == 0 {
			continue
		}
		breaks = append(breaks, big.NewRat(int64(l.min), int64(proportions[i])))
		if !l.unbounded {
			breaks = append(breaks, big.NewRat(int64(l.max), int64(proportions[i])))
		}
	}
	slices.SortFunc(breaks, (*big.Rat).Cmp)
	k := sort.Search(len(breaks), func(k int) bool {
		return quotaSumReaches(breaks[k], total, bounds, proportions)
	})
	low := new(big.Rat)
	if k > 0 {
		low = breaks[k-1]
	}
	// probe lies strictly between two breaks, where no target changes state.
	probe := new(big.Rat).Add(low, big.NewRat(1, 1))
	if k < len(breaks) {
		probe.Add(low, breaks[k])
		probe.Mul(probe, big.NewRat(1, 2))
	}
	held, free := int64(0), int64(0)
	for i, l := range bounds {
		share := new(big.Rat).Mul(probe, big.NewRat(int64(proportions[i]), 1))
		switch {
		case proportions[i] == 0 || share.Cmp(big.NewRat(int64(l.min), 1)) <= 0:
			held += int64(l.min)
		case !l.unbounded && share.Cmp(big.NewRat(int64(l.max), 1)) >= 0:
			held += int64(l.max)
		default:
			free += int64(proportions[i])
		}
	}
	return big.NewRat(int64(total)-held, free)
}

// quotaSumReaches reports whether the quotas at level add up to total or
// more.
func quotaSumReaches(level *big.Rat, total int, bounds []limits, proportions []int) bool {
	sum := new(big.Int)
	for i, l := range bounds {
		whole, remainder := quota(level, l, proportions[i])
		sum.Add(sum, scaled(whole, level.Denom()))
		sum.Add(sum, remainder)
	}
	return sum.Cmp(scaled(total, level.Denom())) >= 0
}
