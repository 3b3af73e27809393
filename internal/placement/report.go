package placement

import (
	"slices"
	"strings"
)

// result reports the decided placement. Only entries left to place after
// keepCurrent can be unassigned, and those are in name order, so the list
// comes out sorted; so do the moves, once those of targets that went back to
// their last pod are sorted in. It reports false when a name is given twice, which
// shows here as a name assigned twice or both assigned and unassigned.
func (p *planner) result(fixedCapacity bool) (Result, bool) {
	r := Result{
		Capacity:        p.capacity,
		Load:            make(map[int]int, p.pods.len()),
		Unassigned:      []string{},
		Oversized:       []string{},
		Moves:           []Move{},
		LowerBoundMoves: p.lowerBound,
		Returned:        p.returned,
	}
	for pod, ordinal := range p.pods.ordinals {
		r.Load[ordinal] = p.load[pod]
	}
	assigned := 0
	for i := range p.entries {
		if p.entries[i].pod != unplaced {
			assigned++
		}
	}
	r.Assignments = make(map[string]int, assigned)
	for i := range p.entries {
		if pod := p.entries[i].pod; pod != unplaced {
			r.Assignments[p.targets[i].Name] = p.pods.ordinals[pod]
		}
	}
	if len(r.Assignments) != assigned {
		return Result{}, false
	}
	for k := range p.queue {
		q := &p.queue[k]
		to := NoPod
		if q.pod != unplaced {
			to = p.pods.ordinals[q.pod]
		} else {
			name := p.targets[q.index].Name
			if _, dup := r.Assignments[name]; dup {
				return Result{}, false
			}
			r.Unassigned = append(r.Unassigned, name)
			if fixedCapacity && q.weight > p.capacity {
				r.Oversized = append(r.Oversized, name)
			}
		}
		if q.from != NoPod && q.from != to {
			r.Moves = append(r.Moves, Move{Target: p.targets[q.index].Name, From: q.from, To: to})
		}
	}
	if len(p.returns) > 0 {
		r.Moves = append(r.Moves, p.returns...)
		slices.SortFunc(r.Moves, func(a, b Move) int { return strings.Compare(a.Target, b.Target) })
	}
	return r, true
}
