package placement

import (
	"cmp"
	"slices"
)

// referencePlace is the placement algorithm written down as plainly as
// possible, with no regard for speed: every target sorts all pods by score.
// Place must agree with it on every input.
func referencePlace(in Input) Result {
	n := normalize(in)
	capacity := in.PodCapacity
	if capacity <= 0 {
		capacity = 0
		if len(n.pods) > 0 && len(n.names) > 0 {
			total, heaviest := 0, 0
			for _, w := range n.weights {
				total += w
				heaviest = max(heaviest, w)
			}
			capacity = (total+len(n.pods)-1)/len(n.pods) + heaviest - 1
		}
	}
	load := map[int]int{}
	assigned := map[string]int{}

	// Keep, per pod, best score first, while they fit: first the targets at
	// home there (without a last pod elsewhere), then those whose last pod it
	// is, then those away from their last pod that are on it now.
	returned := 0
	keep := func(o int, member func(name string) bool) []string {
		var members []string
		for _, name := range n.names {
			if _, done := assigned[name]; !done && member(name) {
				members = append(members, name)
			}
		}
		slices.SortStableFunc(members, func(a, b string) int { return cmp.Compare(Score(b, o), Score(a, o)) })
		var kept []string
		for _, name := range members {
			if load[o]+n.weights[name] <= capacity {
				load[o] += n.weights[name]
				assigned[name] = o
				kept = append(kept, name)
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
		returned += len(keep(o, func(name string) bool { last, ok := n.last[name]; return ok && last == o }))
	}
	for _, o := range n.pods {
		keep(o, func(name string) bool {
			from, ok := n.current[name]
			_, away := n.last[name]
			return ok && from == o && away
		})
	}
	// Everyone else, alphabetically, to the best-scoring pod with room.
	for _, name := range n.names {
		if _, ok := assigned[name]; ok {
			continue
		}
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

	r := Result{
		Capacity:        capacity,
		Assignments:     assigned,
		Load:            map[int]int{},
		Unassigned:      []string{},
		Oversized:       []string{},
		Moves:           []Move{},
		LowerBoundMoves: lowerBound(n, capacity),
		Returned:        returned,
	}
	for _, o := range n.pods {
		r.Load[o] = load[o]
	}
	for _, name := range n.names {
		to, ok := assigned[name]
		if !ok {
			to = NoPod
			r.Unassigned = append(r.Unassigned, name)
			if in.PodCapacity > 0 && n.weights[name] > capacity {
				r.Oversized = append(r.Oversized, name)
			}
		}
		if from, ok := n.current[name]; ok && from != to {
			r.Moves = append(r.Moves, Move{Target: name, From: from, To: to})
		}
	}
	return r
}
