package balance

// byPriority fills the targets at the given indexes one after the other,
// each up to its maximum, after every target has its minimum.
func byPriority(rank []int) spreader {
	return func(total int, bounds []limits) []int {
		out, left := minimums(total, bounds)
		for _, i := range rank {
			if left <= 0 {
				break
			}
			take := bounds[i].room(out[i], left)
			out[i] += take
			left -= take
		}
		return out
	}
}

// rankOf turns the priority order into indexes of the name-sorted targets.
// Validate has made sure that every name in order is a target.
func rankOf(order []string, targets []Target) []int {
	index := make(map[string]int, len(targets))
	for i, t := range targets {
		index[t.Name] = i
	}
	rank := make([]int, len(order))
	for r, name := range order {
		rank[r] = index[name]
	}
	return rank
}
