package placement

import (
	"cmp"
	"slices"
)

// referencePlaceByWeight is FillByWeight written down as plainly as possible,
// with no regard for speed: shedding removes from a slice, every target sorts
// all pods by score. Place must agree with it on every input.
func referencePlaceByWeight(in Input) Result {
	n := normalize(in)
	total, heaviest := 0, 0
	for _, w := range n.weights {
		total += w
		heaviest = max(heaviest, w)
	}
	pods := len(n.pods)
	automatic := in.PodCapacity <= 0 && pods > 0 && len(n.names) > 0
	capacity, widened := max(in.PodCapacity, 0), 0
	if automatic {
		capacity, widened = referenceBalancedCapacity(n, total, heaviest), (total+pods-1)/pods+heaviest-1
	}
	finish := func(r Result, capacity int) Result {
		r.Capacity = capacity
		r.LowerBoundMoves = lowerBound(n, capacity)
		if in.PodCapacity > 0 {
			for _, name := range r.Unassigned {
				if n.weights[name] > capacity {
					r.Oversized = append(r.Oversized, name)
				}
			}
		}
		return r
	}
	r := referenceAttempt(n, capacity)
	if !automatic || len(r.Unassigned) == 0 {
		return finish(r, capacity)
	}
	// The lowest capacity at which every target has room, by bisection:
	// tooLow leaves a target out, enough does not.
	tooLow, enough := capacity, widened
	for enough-tooLow > 1 {
		try := (tooLow + enough) / 2
		if len(referenceAttempt(n, try).Unassigned) == 0 {
			enough = try
		} else {
			tooLow = try
		}
	}
	return finish(referenceAttempt(n, enough), enough)
}

// referenceBalancedCapacity: the even share with a slack of
// min(heaviest-1, total/(25·pods)), or the heaviest weight if larger.
func referenceBalancedCapacity(n normalized, total, heaviest int) int {
	pods := len(n.pods)
	return max(heaviest, (total+pods-1)/pods+min(heaviest-1, total/(25*pods)))
}

func heaviestFirst(n normalized, names []string) []string {
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		if c := cmp.Compare(n.weights[b], n.weights[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return out
}

// referenceAttempt places within one capacity and returns the result without
// Capacity, LowerBoundMoves and Oversized.
func referenceAttempt(n normalized, capacity int) Result {
	load := map[int]int{}
	assigned := map[string]int{}
	returned := 0
	// Keep, per pod, all but the fewest (and of those the lightest) that
	// must go: first the targets at home there, then those whose last pod it
	// is, then those away from their last pod that are on it now.
	keep := func(o int, member func(name string) bool) int {
		var members []string
		for _, name := range n.names {
			if _, done := assigned[name]; !done && member(name) {
				members = append(members, name)
			}
		}
		for _, name := range referenceKept(n, o, members, capacity-load[o]) {
			load[o] += n.weights[name]
			assigned[name] = o
		}
		kept := 0
		for _, name := range members {
			if _, ok := assigned[name]; ok {
				kept++
			}
		}
		return kept
	}
	for _, o := range n.pods {
		keep(o, func(name string) bool {
			from, ok := n.current[name]
			_, away := n.last[name]
			return ok && from == o && !away
		})
	}
	for _, o := range n.pods {
		returned += keep(o, func(name string) bool { last, ok := n.last[name]; return ok && last == o })
	}
	for _, o := range n.pods {
		keep(o, func(name string) bool {
			from, ok := n.current[name]
			_, away := n.last[name]
			return ok && from == o && away
		})
	}
	var queue []string
	for _, name := range n.names {
		if _, ok := assigned[name]; !ok {
			queue = append(queue, name)
		}
	}
	queue = heaviestFirst(n, queue)
	for _, name := range queue {
		ranked := slices.Clone(n.pods)
		slices.SortStableFunc(ranked, func(a, b int) int { return cmp.Compare(Score(name, b), Score(name, a)) })
		for _, o := range ranked {
			if load[o]+n.weights[name] <= capacity {
				load[o] += n.weights[name]
				assigned[name] = o
				break
			}
		}
	}
	r := Result{Assignments: assigned, Load: map[int]int{}, Unassigned: []string{}, Oversized: []string{}, Moves: []Move{}, Returned: returned}
	for _, o := range n.pods {
		r.Load[o] = load[o]
	}
	for _, name := range n.names {
		to, ok := assigned[name]
		if !ok {
			to = NoPod
			r.Unassigned = append(r.Unassigned, name)
		}
		if from, ok := n.current[name]; ok && from != to {
			r.Moves = append(r.Moves, Move{Target: name, From: from, To: to})
		}
	}
	return r
}

// referenceKept is the members a pod keeps with room units left: all of them
// if they fit; otherwise, ordered heaviest first (best score first among
// equal weights), k = the fewest of the heaviest that weigh the excess go,
// chosen one by one: with s to go and r units to shed, the last target, from
// position s-1 of those still there, whose weight reaches r minus the weight
// of the s-1 first.
func referenceKept(n normalized, o int, members []string, room int) []string {
	total := 0
	for _, name := range members {
		total += n.weights[name]
	}
	if total <= room {
		return members
	}
	rest := slices.Clone(members)
	slices.SortStableFunc(rest, func(a, b string) int {
		if c := cmp.Compare(n.weights[b], n.weights[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(Score(b, o), Score(a, o)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	excess, k, sum := total-room, 0, 0
	for sum < excess {
		sum += n.weights[rest[k]]
		k++
	}
	need := excess
	for s := k; s > 0; s-- {
		first := 0
		for _, name := range rest[:s-1] {
			first += n.weights[name]
		}
		pick := -1
		for j := s - 1; j < len(rest); j++ {
			if n.weights[rest[j]] >= need-first {
				pick = j
			}
		}
		need -= n.weights[rest[pick]]
		rest = slices.Delete(rest, pick, pick+1)
	}
	return rest
}
