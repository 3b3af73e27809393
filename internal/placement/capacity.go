package placement

// capacityFor returns the bound on every pod's load for these targets on this
// many pods, with this fill, before any raise (see fillHeaviestFirst).
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

// balancedCapacity is the automatic capacity of FillByWeight before any
// raise: the even share with a slack, ceil(total/pods) + min(heaviest-1,
// floor(total / (25·pods))), or the heaviest weight if larger. It is never
// above widenedCapacity, and exactly ceil(targets/pods) when every weight is
// 1. It does not promise that every target fits (three targets of weight 10
// on two pods get 15); fillHeaviestFirst raises it when one does not.
func balancedCapacity(entries []entry, pods int) int {
	total, heaviest := totalAndHeaviest(entries)
	return max(heaviest, ceilDiv(total, pods)+min(heaviest-1, total/(slackDivisor*pods)))
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
