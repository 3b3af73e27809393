package balance

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// checkInvariants returns the first guarantee that r breaks for the valid
// input in, or nil. It restates the package documentation independently of
// the implementation.
func checkInvariants(in Input, r Result) error {
	byName := map[string]Target{}
	for _, t := range in.Targets {
		byName[t.Name] = t
	}
	if len(r.Targets) != len(in.Targets) {
		return fmt.Errorf("%d allocations for %d targets", len(r.Targets), len(in.Targets))
	}
	if !slices.IsSortedFunc(r.Targets, func(a, b Allocation) int { return strings.Compare(a.Name, b.Name) }) {
		return fmt.Errorf("allocations not sorted by name")
	}
	for _, a := range r.Targets {
		t, ok := byName[a.Name]
		if !ok {
			return fmt.Errorf("allocation for %q, which is not a target", a.Name)
		}
		if err := checkAllocation(in, t, a); err != nil {
			return fmt.Errorf("target %q: %w", a.Name, err)
		}
	}
	if err := checkTotals(in, r); err != nil {
		return err
	}
	if in.Policy == Proportional {
		return checkQuotas(in, r)
	}
	return nil
}

// checkAllocation: bounds, the fallback's rules and the reasons of one target.
func checkAllocation(in Input, t Target, a Allocation) error {
	for what, n := range map[string]int{"base": a.Base, "desired": a.Desired} {
		if n < t.Min {
			return fmt.Errorf("%s %d below min %d", what, n, t.Min)
		}
		if t.Max != nil && n > *t.Max {
			return fmt.Errorf("%s %d above max %d", what, n, *t.Max)
		}
	}
	if a.Desired != a.Base+a.Replacements {
		return fmt.Errorf("desired %d != base %d + replacements %d", a.Desired, a.Base, a.Replacements)
	}
	if !policyNames(in, t) && a.Desired != t.Min {
		return fmt.Errorf("not named by the policy, desired %d, min %d", a.Desired, t.Min)
	}
	blocked := in.StartupTimeout > 0 && t.NotStarted > 0 && t.Waiting > in.StartupTimeout
	if a.Blocked != blocked {
		return fmt.Errorf("blocked %v, want %v", a.Blocked, blocked)
	}
	wantMissing := 0
	if blocked {
		wantMissing = max(0, a.Base-t.Started)
	}
	if a.Missing != wantMissing {
		return fmt.Errorf("missing %d, want %d", a.Missing, wantMissing)
	}
	if a.Replacements < 0 || (blocked && a.Replacements != 0) {
		return fmt.Errorf("blocked %v with %d replacements", blocked, a.Replacements)
	}
	reasons := strings.Join(a.Reasons, "; ")
	if (blocked && a.Missing > 0) != strings.Contains(reasons, "fallback active") {
		return fmt.Errorf("reasons %q for missing %d", reasons, a.Missing)
	}
	if (a.Replacements > 0) != strings.Contains(reasons, "for replicas not started in blocked targets") {
		return fmt.Errorf("reasons %q for %d replacements", reasons, a.Replacements)
	}
	atMax := policyNames(in, t) && t.Max != nil && a.Desired == *t.Max
	if atMax != strings.Contains(reasons, "reached") {
		return fmt.Errorf("reasons %q, at max %v", reasons, atMax)
	}
	return nil
}

// checkTotals: the counts of the Result add up, the base spreads exactly the
// total when the limits allow it, and the fallback adds what it can.
func checkTotals(in Input, r Result) error {
	var sumMin, placed, baseSum, missing, blockedBase int
	var capacity, healthyCapacity bound
	for _, a := range r.Targets {
		t := targetNamed(in, a.Name)
		sumMin += t.Min
		placed += a.Desired
		baseSum += a.Base
		missing += a.Missing
		capacity.add(in, t)
		if a.Blocked {
			blockedBase += a.Base
		} else {
			healthyCapacity.add(in, t)
		}
	}
	if r.Placed != placed || r.Missing != missing {
		return fmt.Errorf("placed %d missing %d, allocations add up to %d and %d", r.Placed, r.Missing, placed, missing)
	}
	if want := capacity.clamp(max(in.Replicas, sumMin), 0); baseSum != want {
		return fmt.Errorf("bases add up to %d, want min(max(%d, %d), %v) = %d", baseSum, in.Replicas, sumMin, capacity, want)
	}
	asked := in.Replicas + missing
	if r.Placed != asked+r.Excess-r.Unplaced || r.Excess < 0 || r.Unplaced < 0 || (r.Excess > 0 && r.Unplaced > 0) {
		return fmt.Errorf("placed %d, asked %d, excess %d, unplaced %d", r.Placed, asked, r.Excess, r.Unplaced)
	}
	if want := healthyCapacity.clamp(max(asked, baseSum), blockedBase); missing > 0 && placed != want {
		return fmt.Errorf("fallback placed %d, want min(max(%d, %d), %d + %v) = %d", placed, asked, baseSum, blockedBase, healthyCapacity, want)
	}
	if missing == 0 {
		for _, a := range r.Targets {
			if a.Desired != a.Base {
				return fmt.Errorf("no replica missing, yet %q desires %d over a base of %d", a.Name, a.Desired, a.Base)
			}
		}
	}
	if r.Excess > 0 {
		for _, a := range r.Targets {
			if t := targetNamed(in, a.Name); a.Desired != t.Min {
				return fmt.Errorf("excess %d, yet %q desires %d above its min %d", r.Excess, a.Name, a.Desired, t.Min)
			}
		}
	}
	return nil
}

// bound is a sum of maximums, unbounded once one target has none.
type bound struct {
	sum       int
	unbounded bool
}

// add counts what the policy may give t at most.
func (b *bound) add(in Input, t Target) {
	switch {
	case !policyNames(in, t):
		b.sum += t.Min
	case t.Max == nil:
		b.unbounded = true
	default:
		b.sum += *t.Max
	}
}

// clamp is n, but at most offset plus the bound.
func (b bound) clamp(n, offset int) int {
	if b.unbounded {
		return n
	}
	return min(n, offset+b.sum)
}

func (b bound) String() string {
	if b.unbounded {
		return "unbounded"
	}
	return fmt.Sprint(b.sum)
}

// checkQuotas: every proportional count is its quota rounded up or down, and
// the counts rounded up have larger fractional parts than those rounded down,
// which is what makes the largest deviation from the quotas the smallest.
// The quotas come from the floating-point reference.
func checkQuotas(in Input, r Result) error {
	base := referenceQuotas(in.Replicas, in, nil)
	if err := checkRounding(base, r, func(a Allocation) int { return a.Base }); err != nil {
		return fmt.Errorf("base: %w", err)
	}
	if r.Missing == 0 {
		return nil
	}
	desired := referenceQuotas(in.Replicas+r.Missing, in, r.Targets)
	if err := checkRounding(desired, r, func(a Allocation) int { return a.Desired }); err != nil {
		return fmt.Errorf("fallback: %w", err)
	}
	return nil
}

const tolerance = 1e-6

func checkRounding(quotas map[string]float64, r Result, count func(Allocation) int) error {
	smallestUp, largestDown := math.Inf(1), math.Inf(-1)
	var up, down string
	for _, a := range r.Targets {
		q, n := quotas[a.Name], float64(count(a))
		if math.Abs(n-q) >= 1+tolerance {
			return fmt.Errorf("%q has %v, quota %.9f", a.Name, n, q)
		}
		fraction := q - math.Floor(q+tolerance)
		if math.Abs(fraction) < tolerance || fraction > 1-tolerance {
			continue // a whole quota, nothing to round
		}
		if n > q && fraction < smallestUp {
			smallestUp, up = fraction, a.Name
		}
		if n < q && fraction > largestDown {
			largestDown, down = fraction, a.Name
		}
	}
	if largestDown > smallestUp+tolerance {
		return fmt.Errorf("%q rounded up with fraction %.9f, %q rounded down with %.9f", up, smallestUp, down, largestDown)
	}
	return nil
}

// policyNames reports whether the policy may give t more than its minimum.
func policyNames(in Input, t Target) bool {
	if in.Policy == Proportional {
		return t.Proportion > 0
	}
	return slices.Contains(in.Order, t.Name)
}

func targetNamed(in Input, name string) Target {
	for _, t := range in.Targets {
		if t.Name == name {
			return t
		}
	}
	panic("no target " + name)
}

// describe is a compact rendering of an input for failure messages.
func describe(in Input) string {
	var b strings.Builder
	fmt.Fprintf(&b, "replicas=%d policy=%s order=%q startupTimeout=%s targets=[", in.Replicas, in.Policy, in.Order, in.StartupTimeout)
	for i, t := range in.Targets {
		if i > 0 {
			b.WriteString(" ")
		}
		maxText := "none"
		if t.Max != nil {
			maxText = fmt.Sprint(*t.Max)
		}
		fmt.Fprintf(&b, "{%s min=%d max=%s p=%d started=%d notStarted=%d waiting=%s}",
			t.Name, t.Min, maxText, t.Proportion, t.Started, t.NotStarted, t.Waiting)
	}
	b.WriteString("]")
	return b.String()
}
