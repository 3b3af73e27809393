package placement

// capacityFor returns the bound on every pod's load for these targets on this
// many pods.
//
// A positive podCapacity is used as it is. Zero means automatic: the even
// share ceil(total weight / pods) plus the heaviest weight minus one, which
// with every weight 1 is exactly ceil(targets / pods). The widening keeps the
// promise of automatic capacity that every target gets a pod while there is
// one. Suppose a target of weight w fit nowhere at its turn: every pod would
// hold at least capacity-w+1 >= ceil(total/pods) units, so all pods together
// would hold at least the total weight, yet they hold at most total-w.
// With no pods or no targets the automatic capacity is 0.
func capacityFor(podCapacity int, entries []entry, pods int) int {
	if podCapacity > 0 {
		return podCapacity
	}
	if pods == 0 || len(entries) == 0 {
		return 0
	}
	total, heaviest := 0, 0
	for i := range entries {
		total += int(entries[i].weight)
		heaviest = max(heaviest, int(entries[i].weight))
	}
	return (total+pods-1)/pods + heaviest - 1
}
