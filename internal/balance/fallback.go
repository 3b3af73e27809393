package balance

import "time"

// fallback is what the blocked targets ask of the others.
type fallback struct {
	timeout time.Duration
	blocked []bool // per target, in name order
	missing []int  // per target: Base minus Started for a blocked target, else 0
	total   int    // the sum of missing: replacements to place elsewhere
}

// findBlocked finds the targets whose oldest not-started pod has waited
// longer than timeout, and counts their missing replicas. A timeout of 0
// finds none.
//
// Once a target is blocked, every replica of its base that has not started
// counts as missing, including those not created yet: a target that cannot
// start one pod is unlikely to start the next. Started pods above the base
// (the target is being scaled down) make up for nothing elsewhere.
func findBlocked(targets []Target, base []int, timeout time.Duration) fallback {
	fb := fallback{timeout: timeout, blocked: make([]bool, len(targets)), missing: make([]int, len(targets))}
	if timeout <= 0 {
		return fb
	}
	for i, t := range targets {
		if t.NotStarted > 0 && t.Waiting > timeout {
			fb.blocked[i] = true
			fb.missing[i] = max(0, base[i]-t.Started)
			fb.total += fb.missing[i]
		}
	}
	return fb
}

// limits are the limits of the second spread, of Replicas plus the missing
// replicas. A blocked target is held at its base, so that its pods may still
// start but it takes no replacements; every other target starts from its
// base, so that replacements only ever add to it and go where the policy
// sends them, within the target's maximum.
func (fb fallback) limits(policy []limits, base []int) []limits {
	out := make([]limits, len(policy))
	for i, l := range policy {
		if fb.blocked[i] {
			out[i] = limits{min: base[i], max: base[i]}
			continue
		}
		out[i] = limits{min: base[i], max: l.max, unbounded: l.unbounded}
	}
	return out
}
