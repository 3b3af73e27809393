package balance

import (
	"fmt"
	"time"
)

// report turns the spreads into a Result, with the reasons a person reading a
// Balancer's status would want to see.
func report(in Input, targets []Target, isNamed []bool, base, desired []int, fb fallback) Result {
	r := Result{Targets: make([]Allocation, len(targets)), Missing: fb.total}
	for i := range targets {
		r.Placed += desired[i]
	}
	asked := in.Replicas + fb.total
	r.Unplaced = max(0, asked-r.Placed)
	r.Excess = max(0, r.Placed-asked)
	for i, t := range targets {
		a := Allocation{
			Name:         t.Name,
			Desired:      desired[i],
			Base:         base[i],
			Replacements: desired[i] - base[i],
			Blocked:      fb.blocked[i],
			Missing:      fb.missing[i],
		}
		a.Reasons = reasons(in.Policy, t, isNamed[i], a, r.Excess > 0, fb.timeout)
		r.Targets[i] = a
	}
	return r
}

func reasons(policy Policy, t Target, named bool, a Allocation, excess bool, timeout time.Duration) []string {
	var out []string
	if !named && policy == Priority {
		out = append(out, fmt.Sprintf("not in the priority order: gets its min of %d only", t.Min))
	}
	if !named && policy == Proportional {
		out = append(out, fmt.Sprintf("proportion 0: gets its min of %d only", t.Min))
	}
	if excess && t.Min > 0 {
		out = append(out, fmt.Sprintf("min %d kept: the minimums add up to more than the replicas", t.Min))
	}
	if named && t.Max != nil && a.Desired == *t.Max {
		out = append(out, fmt.Sprintf("max %d reached", *t.Max))
	}
	if a.Blocked && a.Missing > 0 {
		out = append(out, fmt.Sprintf("fallback active: %s not started within %s", replicas(a.Missing), timeout))
	}
	if a.Blocked && a.Missing == 0 {
		out = append(out, fmt.Sprintf("a pod has not started within %s: takes no replacements", timeout))
	}
	if a.Replacements > 0 {
		out = append(out, fmt.Sprintf("holds %s for replicas not started in blocked targets", replacements(a.Replacements)))
	}
	return out
}

func replicas(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

func replacements(n int) string {
	if n == 1 {
		return "1 replacement"
	}
	return fmt.Sprintf("%d replacements", n)
}
