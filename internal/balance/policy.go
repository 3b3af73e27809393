package balance

// spreader gives every target (in name order) its replicas out of total,
// within its limits. When total is below the sum of the minimums every
// target gets its minimum; when it is above what the limits allow every
// target the policy may grow gets its maximum.
type spreader func(total int, bounds []limits) []int

func spreaderFor(in Input, targets []Target) spreader {
	if in.Policy == Priority {
		return byPriority(rankOf(in.Order, targets))
	}
	proportions := make([]int, len(targets))
	for i, t := range targets {
		proportions[i] = t.Proportion
	}
	return byProportion(proportions)
}

// named reports, per target in name order, whether the policy may give it
// more than its minimum: it is in the priority order, or it has a positive
// proportion.
func named(in Input, targets []Target) []bool {
	listed := make(map[string]bool, len(in.Order))
	for _, name := range in.Order {
		listed[name] = true
	}
	out := make([]bool, len(targets))
	for i, t := range targets {
		if in.Policy == Priority {
			out[i] = listed[t.Name]
		} else {
			out[i] = t.Proportion > 0
		}
	}
	return out
}

// policyLimits are the targets' own limits, except that a target the policy
// does not name is held at its minimum.
func policyLimits(targets []Target, isNamed []bool) []limits {
	bounds := make([]limits, len(targets))
	for i, t := range targets {
		switch {
		case !isNamed[i]:
			bounds[i] = limits{min: t.Min, max: t.Min}
		case t.Max == nil:
			bounds[i] = limits{min: t.Min, unbounded: true}
		default:
			bounds[i] = limits{min: t.Min, max: *t.Max}
		}
	}
	return bounds
}
