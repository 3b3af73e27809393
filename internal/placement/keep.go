package placement

import (
	"cmp"
	"slices"
)

// keepCurrent decides which targets stay where they are, and which go back
// to their last pod, before the others are placed; it also adds up the lower
// bound of moves.
//
// Invariant: no pod's load exceeds the capacity, not even here. A pod whose
// targets weigh more than the capacity keeps them in descending order of
// their score for that pod, each one that still fits, so the ones it sheds
// are its lowest-scoring (for weight 1, exactly the lowest-scoring). With
// FillByWeight it sheds the fewest instead, light ones first
// (keepAllButFewest); with weight 1 that is the same.
//
// Targets with a last pod are kept in three rounds (keepWithLastPods); an
// input without any is kept in one, the first of them.
func (p *planner) keepCurrent() {
	members := p.groupBy(func(e *entry) int32 { return e.home })
	p.lowerBound = p.fewestMoves(members)
	var s shedding
	if !p.returning {
		for pod, group := range members {
			p.keepBest(pod, group, &s)
		}
		return
	}
	p.keepWithLastPods(members, &s)
}

// keepWithLastPods keeps the targets in three rounds over every pod:
//  1. the targets on the pod they belong on (without a last pod elsewhere)
//     stay while the pod has room, as they would without last pods;
//  2. the targets whose last pod is available go back to it while it has
//     room, best-scoring first for that pod;
//  3. the targets away from their last pod that did not go back stay on
//     their current pod while it has room, best-scoring first.
//
// A pod's own targets thus come before those that wait on it for their pod
// to come back, and a restart whose pods come back one by one ends where it
// began: each pod takes its targets back as it becomes available, and sheds
// first the targets that only waited on it.
func (p *planner) keepWithLastPods(members [][]int32, s *shedding) {
	var group []int32
	for pod, all := range members {
		group = group[:0]
		for _, i := range all {
			if !p.entries[i].away() {
				group = append(group, i)
			}
		}
		p.keepBest(pod, group, s)
	}
	for pod, back := range p.groupBy(func(e *entry) int32 { return max(e.last, unplaced) }) {
		p.keepBest(pod, back, s)
		for _, i := range back {
			if e := &p.entries[i]; e.pod == int32(pod) {
				p.returned++
				if e.from != NoPod {
					p.returns = append(p.returns, Move{Target: p.targets[i].Name, From: e.from, To: p.pods.ordinals[pod]})
				}
			}
		}
	}
	for pod, all := range members {
		group = group[:0]
		for _, i := range all {
			if e := &p.entries[i]; e.away() && e.pod == unplaced {
				group = append(group, i)
			}
		}
		p.keepBest(pod, group, s)
	}
}

// shedding is scratch space reused from one over-capacity pod to the next.
type shedding struct {
	ranked []rankedEntry
	prefix []int   // keepAllButFewest: the weight of the j heaviest
	below  []int32 // keepAllButFewest: the last position still in the group at or before j
	out    []bool  // keepAllButFewest: the positions shed
	// keepAllButFewest: the group by weight, and the runs of equal weights
	// already sorted by score (by their first position)
	byWeight []weighed
	sorted   []bool
}

// keepBest keeps the best of a group of targets on a pod while they fit in
// the room the pod has left.
func (p *planner) keepBest(pod int, group []int32, s *shedding) {
	total, heaviest := 0, 0
	for _, i := range group {
		total += int(p.entries[i].weight)
		heaviest = max(heaviest, int(p.entries[i].weight))
	}
	switch room := p.capacity - p.load[pod]; {
	case total <= room:
		p.keepAll(pod, group, total)
	case heaviest == 1:
		p.keepBestOfWeightOne(pod, group, room, s)
	case p.fill == FillByWeight:
		p.keepAllButFewest(pod, group, total, room, s)
	default:
		p.keepBestThatFit(pod, group, s)
	}
}

func (p *planner) keepAll(pod int, group []int32, total int) {
	for _, i := range group {
		p.entries[i].pod = int32(pod)
	}
	p.load[pod] += total
}

// keepBestOfWeightOne keeps the room best of a pod's targets that all weigh
// 1; the order among those kept does not matter, so they are selected, not
// sorted.
func (p *planner) keepBestOfWeightOne(pod int, group []int32, room int, s *shedding) {
	if room <= 0 {
		return
	}
	s.ranked = p.rankFor(s.ranked[:0], group, p.pods.keys[pod])
	selectBest(s.ranked, room, p.rankOrder)
	for _, r := range s.ranked[:room] {
		p.entries[r.entry].pod = int32(pod)
	}
	p.load[pod] += room
}

// keepBestThatFit goes through a pod's weighted targets best first and keeps
// each one that still fits.
func (p *planner) keepBestThatFit(pod int, group []int32, s *shedding) {
	s.ranked = p.rankFor(s.ranked[:0], group, p.pods.keys[pod])
	slices.SortFunc(s.ranked, p.rankOrder)
	for _, r := range s.ranked {
		if e := &p.entries[r.entry]; int(e.weight) <= p.capacity-p.load[pod] {
			e.pod = int32(pod)
			p.load[pod] += int(e.weight)
		}
	}
}

// fewestMoves is the lower bound of moves: every target whose pod is gone,
// plus, for every pod whose current targets weigh more than the capacity, the
// fewest of them whose removal brings it within.
func (p *planner) fewestMoves(members [][]int32) int {
	bound := 0
	var weights []int
	for _, group := range members {
		total, heaviest := 0, 0
		for _, i := range group {
			total += int(p.entries[i].weight)
			heaviest = max(heaviest, int(p.entries[i].weight))
		}
		switch {
		case total <= p.capacity:
		case heaviest == 1:
			bound += total - p.capacity
		default:
			weights = weights[:0]
			for _, i := range group {
				weights = append(weights, int(p.entries[i].weight))
			}
			bound += fewestRemovals(weights, total-p.capacity)
		}
	}
	for i := range p.entries {
		if e := &p.entries[i]; e.from != NoPod && e.home == unplaced {
			bound++ // its pod is gone
		}
	}
	return bound
}

// groupBy returns, for every available pod, the indexes of the entries that
// podOf gives that pod's index (unplaced for none). All groups share one
// backing array.
func (p *planner) groupBy(podOf func(e *entry) int32) [][]int32 {
	start := make([]int, p.pods.len()+1)
	for i := range p.entries {
		if pod := podOf(&p.entries[i]); pod != unplaced {
			start[pod+1]++
		}
	}
	for pod := range p.pods.len() {
		start[pod+1] += start[pod]
	}
	flat := make([]int32, start[p.pods.len()])
	next := slices.Clone(start[:p.pods.len()])
	for i := range p.entries {
		if pod := podOf(&p.entries[i]); pod != unplaced {
			flat[next[pod]] = int32(i)
			next[pod]++
		}
	}
	groups := make([][]int32, p.pods.len())
	for pod := range groups {
		groups[pod] = flat[start[pod]:start[pod+1]:start[pod+1]]
	}
	return groups
}

// fewestRemovals is how many of these weights must go, at the least, to take
// away excess units: the heaviest first.
func fewestRemovals(weights []int, excess int) int {
	slices.SortFunc(weights, func(a, b int) int { return cmp.Compare(b, a) })
	removed := 0
	for n, w := range weights {
		if removed >= excess {
			return n
		}
		removed += w
	}
	return len(weights)
}
