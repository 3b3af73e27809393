package placement

// entry is one target while it is being placed; entry i is target i. It
// holds no pointers, so that the garbage collector never scans the entries of
// a large placement.
type entry struct {
	hash   uint64 // hashName of the name, computed once
	from   int    // ordinal of the current pod, or NoPod
	weight int32  // from 1 to MaxWeight
	home   int32  // index of the current pod if it is available, or unplaced
	pod    int32  // index of the pod the target ends on, or unplaced
	last   int32  // index of the last pod if it is available, noLast or lastAway
}

// unplaced is the pod index of a target without a pod.
const unplaced int32 = -1

// The last pod of an entry that has none (or whose last pod is its current
// one), and of one whose last pod is another pod that is not available.
const (
	noLast   int32 = -1
	lastAway int32 = -2
)

// away tells whether the target is not on the pod it belongs on: it has a
// last pod other than its current one.
func (e *entry) away() bool {
	return e.last != noLast
}

// newEntries returns one entry per target, in input order, with its hash,
// weight, current pod and last pod. A weight below 1 counts as 1 and one
// above MaxWeight as MaxWeight, and a negative current or last ordinal counts
// as none.
func newEntries(targets []Target, current, last map[string]int, pods *podSet) []entry {
	entries := make([]entry, len(targets))
	for i := range targets {
		t := &targets[i]
		e := entry{hash: hashName(t.Name), from: NoPod, weight: int32(min(max(t.weight(), 1), MaxWeight)), home: unplaced, pod: unplaced, last: noLast}
		if ordinal, ok := current[t.Name]; ok && ordinal >= 0 {
			e.from = ordinal
			if home, ok := pods.index(ordinal); ok {
				e.home = home
			}
		}
		if ordinal, ok := last[t.Name]; ok && ordinal >= 0 && ordinal != e.from {
			e.last = lastAway
			if back, ok := pods.index(ordinal); ok {
				e.last = back
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
