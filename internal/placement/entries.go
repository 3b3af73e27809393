package placement

// entry is one target while it is being placed; entry i is target i. It
// holds no pointers, so that the garbage collector never scans the entries of
// a large placement.
type entry struct {
	hash   uint64 // hashName of the name, computed once
	from   int    // ordinal of the current pod, or NoPod
	weight int
	home   int32 // index of the current pod if it is available, or unplaced
	pod    int32 // index of the pod the target ends on, or unplaced
}

// unplaced is the pod index of a target without a pod.
const unplaced int32 = -1

// newEntries returns one entry per target, in input order, with its hash,
// weight and current pod. A weight below 1 counts as 1 and one above
// MaxWeight as MaxWeight, and a negative current ordinal counts as no
// current pod.
func newEntries(targets []Target, current map[string]int, pods *podSet) []entry {
	entries := make([]entry, len(targets))
	for i := range targets {
		t := &targets[i]
		e := entry{hash: hashName(t.Name), from: NoPod, weight: min(max(t.weight(), 1), MaxWeight), home: unplaced, pod: unplaced}
		if ordinal, ok := current[t.Name]; ok && ordinal >= 0 {
			e.from = ordinal
			if home, ok := pods.index(ordinal); ok {
				e.home = home
			}
		}
		entries[i] = e
	}
	return entries
}

// mergeDuplicates returns targets with every name once, with the largest
// weight it was given. Place only needs it for input that Validate rejects.
func mergeDuplicates(targets []Target) []Target {
	index := make(map[string]int, len(targets))
	merged := make([]Target, 0, len(targets))
	for _, t := range targets {
		w := min(max(t.weight(), 1), MaxWeight)
		if i, seen := index[t.Name]; seen {
			merged[i].Weight = max(merged[i].Weight, w)
			continue
		}
		index[t.Name] = len(merged)
		merged = append(merged, Target{Name: t.Name, Weight: w})
	}
	return merged
}
