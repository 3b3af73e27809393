package balance

import (
	"math"
	"slices"
)

// referencePriority is the priority policy the slow and obvious way: one
// replica at a time to the first target in the order that has room, then one
// replacement at a time to the first target in the order that has room and
// is not blocked. It returns the base and desired count of every target.
func referencePriority(in Input) (base, desired map[string]int) {
	base, desired = map[string]int{}, map[string]int{}
	left := in.Replicas
	for _, t := range in.Targets {
		base[t.Name] = t.Min
		left -= t.Min
	}
	hasRoom := func(counts map[string]int, name string) bool {
		t := targetNamed(in, name)
		return t.Max == nil || counts[name] < *t.Max
	}
	for ; left > 0; left-- {
		i := slices.IndexFunc(in.Order, func(name string) bool { return hasRoom(base, name) })
		if i < 0 {
			break
		}
		base[in.Order[i]]++
	}
	blocked, replacements := map[string]bool{}, in.Replicas
	for _, t := range in.Targets {
		desired[t.Name] = base[t.Name]
		replacements -= base[t.Name]
		if in.StartupTimeout > 0 && t.NotStarted > 0 && t.Waiting > in.StartupTimeout {
			blocked[t.Name] = true
			replacements += max(0, base[t.Name]-t.Started)
		}
	}
	if len(blocked) == 0 {
		return base, desired
	}
	// replacements is now Replicas plus the missing replicas minus the bases:
	// negative when the minimums alone already cover the missing replicas.
	for ; replacements > 0; replacements-- {
		i := slices.IndexFunc(in.Order, func(name string) bool { return !blocked[name] && hasRoom(desired, name) })
		if i < 0 {
			break
		}
		desired[in.Order[i]]++
	}
	return base, desired
}

// referenceQuotas computes the proportional quotas in floating point by
// bisection on the level. With allocations nil they are the base quotas of
// total; otherwise the quotas of the fallback's spread of total, with blocked
// targets held at their base and the others starting from it.
func referenceQuotas(total int, in Input, allocations []Allocation) map[string]float64 {
	type span struct {
		lo, hi, p float64
	}
	spans := map[string]span{}
	for _, t := range in.Targets {
		s := span{lo: float64(t.Min), hi: math.Inf(1), p: float64(t.Proportion)}
		if t.Max != nil {
			s.hi = float64(*t.Max)
		}
		if t.Proportion == 0 {
			s.hi = s.lo
		}
		spans[t.Name] = s
	}
	for _, a := range allocations {
		s := spans[a.Name]
		s.lo = float64(a.Base)
		if a.Blocked {
			s.hi = s.lo
		}
		spans[a.Name] = s
	}
	quota := func(s span, level float64) float64 { return min(max(level*s.p, s.lo), s.hi) }
	sum := func(level float64) float64 {
		total := 0.0
		for _, s := range spans {
			total += quota(s, level)
		}
		return total
	}
	want := float64(total)
	quotas := map[string]float64{}
	if sum(0) >= want {
		for name, s := range spans {
			quotas[name] = s.lo
		}
		return quotas
	}
	if sum(math.Inf(1)) <= want {
		for name, s := range spans {
			quotas[name] = s.hi
		}
		return quotas
	}
	low, high := 0.0, 1.0
	for sum(high) < want {
		low, high = high, 2*high
	}
	for range 200 {
		mid := (low + high) / 2
		if sum(mid) < want {
			low = mid
		} else {
			high = mid
		}
	}
	// Solve the linear piece the level lies on exactly rather than trust the
	// last bisection step.
	held, free := 0.0, 0.0
	for _, s := range spans {
		q := quota(s, high)
		if s.p == 0 || q == s.lo || q == s.hi {
			held += q
		} else {
			free += s.p
		}
	}
	level := high
	if free > 0 {
		level = (want - held) / free
	}
	for name, s := range spans {
		quotas[name] = quota(s, level)
	}
	return quotas
}

// smallestLargestDeviation tries every way to give each target a count
// within its bounds so that the counts add up to total, and returns the
// smallest possible largest difference between a count and its quota.
func smallestLargestDeviation(total int, lows, highs []int, quotas []float64) float64 {
	best := math.Inf(1)
	counts := make([]int, len(lows))
	var try func(i, left int)
	try = func(i, left int) {
		if i == len(lows) {
			if left != 0 {
				return
			}
			worst := 0.0
			for j, n := range counts {
				worst = max(worst, math.Abs(float64(n)-quotas[j]))
			}
			best = min(best, worst)
			return
		}
		for n := lows[i]; n <= highs[i] && n <= left; n++ {
			counts[i] = n
			try(i+1, left-n)
		}
	}
	try(0, total)
	return best
}
