package placement

import (
	"cmp"
	"slices"
	"sort"
)

// keepAllButFewest keeps a group of weighted targets on a pod except the
// fewest whose removal brings the group within the room the pod has left,
// and of those the lightest: FillByWeight's shedding.
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
// less than the weight of each one shed. With every weight 1 these are the k
// lowest-scoring targets, as keepBestOfWeightOne keeps them.
func (p *planner) keepAllButFewest(pod int, group []int32, total, room int, s *shedding) {
	s.ranked = p.rankFor(s.ranked[:0], group, p.pods.keys[pod])
	ranked := s.ranked
	// Heaviest first; of equal weights the best-scoring first, so that the
	// last one of a weight scores lowest.
	slices.SortFunc(ranked, func(a, b rankedEntry) int {
		if c := cmp.Compare(p.entries[b.entry].weight, p.entries[a.entry].weight); c != 0 {
			return c
		}
		return p.rankOrder(a, b)
	})
	weight := func(j int) int { return int(p.entries[ranked[j].entry].weight) }
	excess := total - room
	// prefix[j] is the weight of the j heaviest; k is the fewest to shed.
	prefix := slices.Grow(s.prefix[:0], len(ranked)+1)[:len(ranked)+1]
	prefix[0] = 0
	k := -1
	for j := range ranked {
		prefix[j+1] = prefix[j] + weight(j)
		if k < 0 && prefix[j+1] >= excess {
			k = j + 1
		}
	}
	s.prefix = prefix
	// below[j] leads, through removed positions, to the last position at or
	// before j that is still in the group (a union-find with path halving).
	below := slices.Grow(s.below[:0], len(ranked))[:len(ranked)]
	for j := range below {
		below[j] = int32(j)
	}
	s.below = below
	out := slices.Grow(s.out[:0], len(ranked))[:len(ranked)]
	clear(out)
	s.out = out
	find := func(j int) int {
		for int(below[j]) != j {
			below[j] = below[below[j]]
			j = int(below[j])
		}
		return j
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
		reach := sort.Search(len(ranked)-from, func(i int) bool { return weight(from+i) < threshold })
		j := find(from + reach - 1)
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
