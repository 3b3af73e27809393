package placement

import (
	"cmp"
	"slices"
)

// keepCurrent keeps every target on its current pod while that pod is
// available and has room, and adds up the lower bound of moves.
//
// Invariant: no pod's load exceeds the capacity, not even here. A pod whose
// current targets weigh more than the capacity keeps them in descending order
// of their score for that pod, each one that still fits, so the ones it sheds
// are its lowest-scoring (for weight 1, exactly the lowest-scoring).
func (p *planner) keepCurrent() {
	members := p.groupByHome()
	var s shedding
	for pod := range p.pods.len() {
		group := members[pod]
		total, heaviest := 0, 0
		for _, i := range group {
			total += p.entries[i].weight
			heaviest = max(heaviest, p.entries[i].weight)
		}
		switch {
		case total <= p.capacity:
			p.keepAll(pod, group, total)
		case heaviest == 1:
			p.keepBest(pod, group, &s)
		default:
			p.keepBestThatFit(pod, group, total, &s)
		}
	}
	for i := range p.entries {
		if e := &p.entries[i]; e.from != NoPod && e.home == unplaced {
			p.lowerBound++ // its pod is gone
		}
	}
}

// shedding is scratch space reused from one over-capacity pod to the next.
type shedding struct {
	ranked  []rankedEntry
	weights []int
}

func (p *planner) keepAll(pod int, group []int32, total int) {
	for _, i := range group {
		p.entries[i].pod = int32(pod)
	}
	p.load[pod] = total
}

// keepBest keeps the capacity best of a pod's targets that all weigh 1; the
// order among those kept does not matter, so they are selected, not sorted.
func (p *planner) keepBest(pod int, group []int32, s *shedding) {
	s.ranked = p.rankFor(s.ranked[:0], group, p.pods.keys[pod])
	selectBest(s.ranked, p.capacity, p.rankOrder)
	for _, r := range s.ranked[:p.capacity] {
		p.entries[r.entry].pod = int32(pod)
	}
	p.load[pod] = p.capacity
	p.lowerBound += len(group) - p.capacity
}

// keepBestThatFit goes through a pod's weighted targets best first and keeps
// each one that still fits.
func (p *planner) keepBestThatFit(pod int, group []int32, total int, s *shedding) {
	s.ranked = p.rankFor(s.ranked[:0], group, p.pods.keys[pod])
	slices.SortFunc(s.ranked, p.rankOrder)
	for _, r := range s.ranked {
		if e := &p.entries[r.entry]; e.weight <= p.capacity-p.load[pod] {
			e.pod = int32(pod)
			p.load[pod] += e.weight
		}
	}
	s.weights = s.weights[:0]
	for _, i := range group {
		s.weights = append(s.weights, p.entries[i].weight)
	}
	p.lowerBound += fewestRemovals(s.weights, total-p.capacity)
}

// groupByHome returns, for every available pod, the indexes of the entries
// whose current pod it is. All groups share one backing array.
func (p *planner) groupByHome() [][]int32 {
	start := make([]int, p.pods.len()+1)
	for i := range p.entries {
		if home := p.entries[i].home; home != unplaced {
			start[home+1]++
		}
	}
	for pod := range p.pods.len() {
		start[pod+1] += start[pod]
	}
	flat := make([]int32, start[p.pods.len()])
	next := slices.Clone(start[:p.pods.len()])
	for i := range p.entries {
		if home := p.entries[i].home; home != unplaced {
			flat[next[home]] = int32(i)
			next[home]++
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
