package balance

import (
	"cmp"
	"slices"
)

// Balance decides how many replicas each target runs; the package
// documentation describes how.
//
// Balance is a pure function: it reads nothing but its input, and the same
// input with its targets in any order gives the same Result. Input that
// Validate rejects gives that *InputError and an empty Result.
func Balance(in Input) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, err
	}
	targets := slices.SortedFunc(slices.Values(in.Targets), func(a, b Target) int { return cmp.Compare(a.Name, b.Name) })
	spread := spreaderFor(in, targets)
	isNamed := named(in, targets)
	bounds := policyLimits(targets, isNamed)

	base := spread(in.Replicas, bounds)
	fb := findBlocked(targets, base, in.StartupTimeout)
	desired := base
	if fb.total > 0 {
		desired = spread(in.Replicas+fb.total, fb.limits(bounds, base))
	}
	return report(in, targets, isNamed, base, desired, fb), nil
}
