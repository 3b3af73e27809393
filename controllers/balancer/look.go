package balancer

import (
	"time"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// settleLook is how soon a Balancer that wrote a scale looks again: its status then counts the pods the
// write created or removed, without waiting for the period.
const settleLook = 2 * time.Second

// expiryMargin is how long after a startup timeout ends the Balancer looks: the core blocks a target whose
// pod waited longer than the timeout, not exactly as long.
const expiryMargin = 100 * time.Millisecond

// nextBalancerLook is when a Balancer must be looked at again although nothing wakes it: when the startup
// timeout of a target's longest-waiting pod ends (so that its fallback starts on time), soon after a write,
// and at the latest after the period (the targets' pods are not watched).
func nextBalancerLook(period time.Duration, fallback *operatorv1alpha1.BalancerFallback, targets []observedTarget,
	plan balancerPlan, wrote bool, now time.Time) time.Duration {
	next := period
	if wrote {
		next = min(next, settleLook)
	}
	if fallback != nil {
		timeout := fallback.StartupTimeout.Duration
		for i := range targets {
			t := &targets[i]
			if !t.balanced() || t.pods.notStarted == 0 || plan.allocations[t.spec.Name].Blocked {
				continue
			}
			next = min(next, max(timeout-t.pods.waiting(now), 0)+expiryMargin)
		}
	}
	return max(next, expiryMargin)
}
