package placement

import (
	"slices"
	"sort"
)

// keepAllButFewest keeps a group of weighted targets on a pod except the
// fewest whose removal brings the group within the room the pod has left,
// choosing light ones first: FillByWeight's shedding.
//
// How many must go is fixed first: k, the fewest whose weights add up to the
// excess (total - room), counted heaviest first. Then k targets are chosen one
// at a time, each the lightest that still lets the rest reach the excess with
// the slots left: with s slots left and r units still to shed, the lightest
// target w with w + (the s-1 heaviest others) >= r, and of equal weights the
// one that scores lowest for the pod. So a pod sheds exactly k targets (the
// fewest possible), and the weight it sheds exceeds the excess by less than
// the last target chosen. None of them fits back: any k-1 of the group weigh
// less than the excess, so the room left after shedding, (shed - excess), is
// less than the weight of each one shed. The set is not always the lightest
// k targets that reach the excess (of 12, 8, 8, 7, 7, 3, 2 with an excess of
// 16 it sheds 7 and 12, not 8 and 8), but what it sheds exceeds the excess by
// less than its last pick. With every weight 1 these are the k lowest-scoring
// targets, as keepBestOfWeightOne keeps them.
//
// Only the order of weights is needed to count and to find the lightest
// target that qualifies; the scores are computed, and a run of equal weights
// sorted by them, only for the runs a target is shed from.
func (p *planner) keepAllButFewest(pod int, group []int32, total, room int, s *shedding) {
	n := len(group)
	byWeight := slices.Grow(s.byWeight[:0], 2*n)[:n]
	for at, i := range group {
		byWeight[at] = weighed{weight: p.entries[i].weight, at: int32(at)}
	}
	sortHeaviestFirst(byWeight, byWeight[n:2*n])
	s.byWeight = byWeight
	// ranked is the group heaviest first; within a run of equal weights it
	// is in no particular order until sortRun orders the run best first.
	ranked := slices.Grow(s.ranked[:0], n)[:n]
	for j, it := range byWeight {
		ranked[j] = rankedEntry{entry: group[it.at]}
	}
	s.ranked = ranked
	weight := func(j int) int { return int(byWeight[j].weight) }
	excess := total - room
	// prefix[j] is the weight of the j heaviest; k is the fewest to shed.
	prefix := slices.Grow(s.prefix[:0], n+1)[:n+1]
	prefix[0] = 0
	k := -1
	for j := range n {
		prefix[j+1] = prefix[j] + weight(j)
		if k < 0 && prefix[j+1] >= excess {
			k = j + 1
		}
	}
	s.prefix = prefix
	// below[j] leads, through removed positions, to the last position at or
	// before j that is still in the group (a union-find with path halving).
	below := slices.Grow(s.below[:0], n)[:n]
	for j := range below {
		below[j] = int32(j)
	}
	s.below = below
	find := func(j int) int {
		for int(below[j]) != j {
			below[j] = below[below[j]]
			j = int(below[j])
		}
		return j
	}
	out := slices.Grow(s.out[:0], n)[:n]
	clear(out)
	s.out = out
	sorted := slices.Grow(s.sorted[:0], n)[:n]
	clear(sorted)
	s.sorted = sorted
	// sortRun orders the run of equal weights around position j best first
	// for the pod, the first time a target is shed from it (so before any of
	// its positions is removed).
	key := p.pods.keys[pod]
	sortRun := func(j int) {
		first, end := j, j+1
		for first > 0 && weight(first-1) == weight(j) {
			first--
		}
		if sorted[first] {
			return
		}
		sorted[first] = true
		for end < n && weight(end) == weight(j) {
			end++
		}
		for r := first; r < end; r++ {
			ranked[r].score = scoreHashed(p.entries[ranked[r].entry].hash, key)
		}
		slices.SortFunc(ranked[first:end], p.rankOrder)
	}
	// Invariant: positions 0..slots-2 are the slots-1 heaviest still in the
	// group and were never chosen, and the slots heaviest still in the group
	// weigh at least need. So position slots-1 qualifies, and the lightest
	// qualifying target is the last one in the group at a position from
	// slots-1 on whose weight reaches need - prefix[slots-1].
	shed, need := 0, excess
	for slots := k; slots > 0; slots-- {
		threshold := need - prefix[slots-1]
		// The positions whose weight reaches the threshold are a prefix of
		// ranked, as weights do not increase along it.
		from := slots - 1
		reach := sort.Search(n-from, func(i int) bool { return weight(from+i) < threshold })
		j := find(from + reach - 1)
		sortRun(j)
		shed += weight(j)
		need -= weight(j)
		out[j] = true
		if j > 0 {
			below[j] = int32(j - 1) // the last slot takes position 0 at the latest, and ends the search
		}
	}
	for j, r := range ranked {
		if !out[j] {
			p.entries[r.entry].pod = int32(pod)
		}
	}
	p.load[pod] += total - shed
}
