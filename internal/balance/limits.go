package balance

// limits bound what a policy may give one target.
type limits struct {
	min, max  int
	unbounded bool // no max: the policy may give the target any number
}

// room is how many of wanted more replicas a target holding have can take.
func (l limits) room(have, wanted int) int {
	if l.unbounded {
		return wanted
	}
	return min(wanted, l.max-have)
}

// minimums gives every target its minimum and returns what is left of total,
// negative when the minimums add up to more.
func minimums(total int, bounds []limits) ([]int, int) {
	out := make([]int, len(bounds))
	left := total
	for i, l := range bounds {
		out[i] = l.min
		left -= l.min
	}
	return out, left
}
