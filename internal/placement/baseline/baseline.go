// Package baseline reproduces the placement of the public gNMIc operator, so
// that benchmarks and the churn report can measure package placement against
// it in the same run. It is a yardstick, not something to place targets with.
//
// Its behaviour and its costs are kept as they are upstream: the score is
// FNV-1a 64 over the text "name:index" written through fmt; every target to
// place scores and sorts all pods; a pod holding more current targets than
// its capacity sorts them with the score computed inside the comparator.
package baseline

import (
	"fmt"
	"hash/fnv"
	"sort"
)

// Assignment maps a pod index to the names of the targets on it.
type Assignment map[int][]string

// Place places targets on pods 0..numPods-1. A capacity of 0 means
// ceil(len(targets)/numPods); numPods below 1 counts as 1. Like upstream, it
// keeps current targets even when they are no longer in targets, and it
// sorts the slices of current in place.
func Place(targets []string, numPods, capacity int, current Assignment) Assignment {
	numPods = max(numPods, 1)
	if len(targets) == 0 {
		return Assignment{}
	}
	if capacity == 0 {
		capacity = (len(targets) + numPods - 1) / numPods
	}
	sorted := append([]string(nil), targets...)
	sort.Strings(sorted)

	assignment := make(Assignment, numPods)
	kept := keepCurrent(assignment, current, numPods, capacity)
	for _, name := range sorted {
		if _, ok := kept[name]; ok {
			continue
		}
		if pod, ok := highestWithRoom(name, numPods, capacity, assignment); ok {
			assignment[pod] = append(assignment[pod], name)
		}
	}
	return assignment
}

// keepCurrent keeps each pod's current targets, highest score first, up to
// the capacity, and returns the names it kept.
func keepCurrent(assignment, current Assignment, numPods, capacity int) map[string]struct{} {
	kept := make(map[string]struct{})
	for pod, names := range current {
		if pod >= numPods {
			continue
		}
		sort.Slice(names, func(i, j int) bool {
			return Score(names[i], pod) > Score(names[j], pod)
		})
		for _, name := range names {
			if assignment[pod] == nil {
				assignment[pod] = make([]string, 0, 1)
			}
			if len(assignment[pod]) >= capacity {
				continue
			}
			assignment[pod] = append(assignment[pod], name)
			kept[name] = struct{}{}
		}
	}
	return kept
}

type podScore struct {
	pod   int
	score uint64
}

// highestWithRoom scores the target against every pod, sorts all pods by
// score (lower index first on a tie) and returns the first with room.
func highestWithRoom(name string, numPods, capacity int, assignment Assignment) (int, bool) {
	scores := make([]podScore, numPods)
	for i := range numPods {
		scores[i] = podScore{pod: i, score: Score(name, i)}
	}
	sort.Slice(scores, func(i, j int) bool {
		if scores[i].score == scores[j].score {
			return scores[i].pod < scores[j].pod
		}
		return scores[i].score > scores[j].score
	})
	for _, s := range scores {
		if len(assignment[s.pod]) < capacity {
			return s.pod, true
		}
	}
	return 0, false
}

// Score is FNV-1a 64 of "name:pod", written through fmt as upstream does.
func Score(name string, pod int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s:%d", name, pod)
	return h.Sum64()
}
