package placement

// capacityFor returns the bound on every pod's load for these targets on this
// many pods, with this fill, before any raise (see raisedCapacity).
//
// A positive podCapacity is used as it is. Zero means automatic:
// widenedCapacity for FillByName, balancedCapacity for FillByWeight. With
// every weight 1 both are exactly ceil(targets / pods). With no pods or no
// targets the automatic capacity is 0.
func capacityFor(fill Fill, podCapacity int, entries []entry, pods int) int {
	switch {
	case podCapacity > 0:
		return podCapacity
	case pods == 0 || len(entries) == 0:
		return 0
	case fill == FillByWeight:
		return balancedCapacity(entries, pods)
	default:
		return widenedCapacity(entries, pods)
	}
}

// widenedCapacity is the even share ceil(total weight / pods) plus the
// heaviest weight minus one. The widening keeps the promise of automatic
// capacity that every target gets a pod while there is one, whatever was kept
// and in whatever order the rest is placed. Suppose a target of weight w fit
// nowhere at its turn: every pod would hold at least capacity-w+1 >=
// ceil(total/pods) units, so all pods together would hold at least the total
// weight, yet they hold at most total-w.
func widenedCapacity(entries []entry, pods int) int {
	total, heaviest := totalAndHeaviest(entries)
	return ceilDiv(total, pods) + heaviest - 1
}

// slackDivisor sets the slack of the balanced capacity: a twenty-fifth of the
// mean load (4 %), so that a pod of a balanced fleet absorbs a few weights
// that grow, or a new light target, without shedding anything, while no pod
// is loaded more than 4 % (plus rounding) above the mean.
const slackDivisor = 25

// balancedCapacity is the automatic capacity of FillByWeight: the larger of
//
//   - the even share with a slack, ceil(total/pods) + min(heaviest-1,
//     floor(total / (25·pods))): never above widenedCapacity, exactly
//     ceil(targets/pods) when every weight is 1;
//   - the fill bound of all targets heaviest first (fillBound), so that a
//     placement from scratch places every target.
func balancedCapacity(entries []entry, pods int) int {
	total, heaviest := totalAndHeaviest(entries)
	even := ceilDiv(total, pods) + min(heaviest-1, total/(slackDivisor*pods))
	if heaviest == 1 {
		return even // the fill bound of n targets of weight 1 is ceil(n/pods)
	}
	weights := make([]weighed, len(entries))
	for i := range entries {
		weights[i] = weighed{weight: entries[i].weight}
	}
	sortHeaviestFirst(weights, make([]weighed, len(weights)))
	return max(even, fillBound(total, pods, len(weights), func(k int) int { return int(weights[k].weight) }))
}

// fillBound is the smallest capacity at which placing a sequence of targets in
// this order, each on any pod with room, cannot fail, whatever pod each one
// picks and whatever else the pods already hold, as long as all pods together
// hold total minus the weights of the sequence: max over k of
//
//	w_k + floor((total - w_k - (weights after k)) / pods).
//
// When target k comes, the pods hold total minus w_k minus what comes after
// it (or less, if a target before it was left out), so the least loaded pod
// holds at most the floor of that over pods, and has room for w_k.
// Placed from scratch heaviest first, the term of target k is
// w_k + floor(S_k/pods), S_k the weight of the targets before it.
func fillBound(total, pods, n int, weight func(k int) int) int {
	bound, after := 0, 0
	for k := n - 1; k >= 0; k-- {
		w := weight(k)
		bound = max(bound, w+(total-w-after)/pods)
		after += w
	}
	return bound
}

func totalAndHeaviest(entries []entry) (total, heaviest int) {
	for i := range entries {
		total += int(entries[i].weight)
		heaviest = max(heaviest, int(entries[i].weight))
	}
	return total, heaviest
}

func ceilDiv(a, b int) int {
	return (a + b - 1) / b
}
