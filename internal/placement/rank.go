package placement

import (
	"cmp"
	"slices"
	"strings"
)

// rankedEntry is an entry with its score for one pod.
type rankedEntry struct {
	score uint64
	entry int32
}

// rankOrder orders a pod's targets best first: by descending score for the
// pod, then, for equal scores (which a 64-bit score makes all but
// impossible), by name. The order is total for distinct names.
func (p *planner) rankOrder(a, b rankedEntry) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return strings.Compare(p.targets[a.entry].Name, p.targets[b.entry].Name)
}

// rankFor appends the group's entries with their score for the pod with
// this key, in no particular order.
func (p *planner) rankFor(ranked []rankedEntry, group []int32, key uint64) []rankedEntry {
	for _, i := range group {
		ranked = append(ranked, rankedEntry{score: scoreHashed(p.entries[i].hash, key), entry: i})
	}
	return ranked
}

// selectBest reorders ranked so that its first k items are the k best in
// order, in no particular order among themselves: a quickselect, linear on
// average where sorting would not be.
func selectBest(ranked []rankedEntry, k int, order func(a, b rankedEntry) int) {
	lo, hi := 0, len(ranked)
	if k <= lo || k >= hi {
		return
	}
	for hi-lo > smallRun {
		at := partition(ranked[lo:hi], order) + lo
		switch {
		case at == k || at+1 == k:
			return
		case at > k:
			hi = at
		default:
			lo = at + 1
		}
	}
	slices.SortFunc(ranked[lo:hi], order)
}

// partition moves a pivot (the median of the first, middle and last items)
// to its final place in order, the items before it in order to its left and
// the others to its right, and returns its position.
func partition(items []rankedEntry, order func(a, b rankedEntry) int) int {
	last := len(items) - 1
	first, middle := 0, last/2
	if order(items[middle], items[first]) < 0 {
		first, middle = middle, first
	}
	if order(items[last], items[middle]) < 0 {
		middle = last
		if order(items[middle], items[first]) < 0 {
			middle = first
		}
	}
	items[middle], items[last] = items[last], items[middle]
	pivot, at := items[last], 0
	for i := range last {
		if order(items[i], pivot) < 0 {
			items[at], items[i] = items[i], items[at]
			at++
		}
	}
	items[at], items[last] = items[last], items[at]
	return at
}
