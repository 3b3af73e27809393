package placement

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// placeByWeight runs Place with FillByWeight, checks every guarantee of that
// fill and agreement with its reference, and returns the result.
func placeByWeight(t *testing.T, in Input) Result {
	t.Helper()
	in.Fill = FillByWeight
	r := Place(in)
	if err := checkInvariantsByWeight(in, r); err != nil {
		t.Fatalf("invariant broken: %v\ninput: %s", err, describe(in))
	}
	if ref := referencePlaceByWeight(in); !reflect.DeepEqual(r, ref) {
		t.Fatalf("Place and the reference disagree\ninput: %s\nPlace:     %+v\nreference: %+v", describe(in), r, ref)
	}
	return r
}

// checkInvariantsByWeight returns the first guarantee of FillByWeight that r
// breaks for in, or nil: the shape, stability and move accounting of every
// placement, plus its own capacity and churn guarantees.
func checkInvariantsByWeight(in Input, r Result) error {
	n := normalize(in)
	if err := checkShape(n, r); err != nil {
		return err
	}
	if err := checkCapacityByWeight(in, n, r); err != nil {
		return err
	}
	if err := checkMoves(n, r); err != nil {
		return err
	}
	if err := checkChurnByWeight(n, r); err != nil {
		return err
	}
	return checkStability(n, r)
}

// checkCapacityByWeight: the capacity is podCapacity when fixed; automatic,
// it lies between the balanced capacity and the widened one; it is never
// exceeded, and a target is unassigned only when no pod has room for it
// (never with automatic capacity and a pod).
func checkCapacityByWeight(in Input, n normalized, r Result) error {
	total, heaviest := 0, 0
	for _, w := range n.weights {
		total += w
		heaviest = max(heaviest, w)
	}
	switch {
	case in.PodCapacity > 0:
		if r.Capacity != in.PodCapacity {
			return fmt.Errorf("capacity %d, want podCapacity %d", r.Capacity, in.PodCapacity)
		}
	case len(n.pods) == 0 || len(n.names) == 0:
		if r.Capacity != 0 {
			return fmt.Errorf("capacity %d with no pods or no targets", r.Capacity)
		}
	default:
		balanced := referenceBalancedCapacity(n, total, heaviest)
		widened := (total+len(n.pods)-1)/len(n.pods) + heaviest - 1
		if r.Capacity < balanced || r.Capacity > widened {
			return fmt.Errorf("capacity %d outside [balanced %d, widened %d]", r.Capacity, balanced, widened)
		}
		if len(r.Unassigned) > 0 {
			return fmt.Errorf("automatic capacity left %v unassigned", r.Unassigned)
		}
	}
	var oversized []string
	for o, l := range r.Load {
		if l > r.Capacity {
			return fmt.Errorf("pod %d load %d exceeds capacity %d", o, l, r.Capacity)
		}
	}
	for _, name := range r.Unassigned {
		w := n.weights[name]
		if in.PodCapacity > 0 && w > r.Capacity {
			oversized = append(oversized, name)
			continue
		}
		for _, o := range n.pods {
			if r.Load[o]+w <= r.Capacity {
				return fmt.Errorf("%q (weight %d) unassigned while pod %d has load %d of %d", name, w, o, r.Load[o], r.Capacity)
			}
		}
	}
	if !slices.Equal(oversized, r.Oversized) {
		return fmt.Errorf("oversized %v, want %v", r.Oversized, oversized)
	}
	return nil
}

// checkChurnByWeight: with no target away from its last pod, the moves are
// exactly the lower bound in targets, whatever the weights; and in weight
// units, what leaves each available pod is at least its excess over the
// capacity (what any placement must move) and less than the excess plus the
// heaviest target it sheds.
func checkChurnByWeight(n normalized, r Result) error {
	if len(n.last) > 0 {
		return nil
	}
	if len(r.Moves) != r.LowerBoundMoves {
		return fmt.Errorf("%d moves, lower bound %d", len(r.Moves), r.LowerBoundMoves)
	}
	u := movedUnits(n, r)
	for o, excess := range u.excess {
		if u.left[o] < excess || (excess > 0 && u.left[o] >= excess+u.heaviestLeft[o]) || (excess == 0 && u.left[o] != 0) {
			return fmt.Errorf("pod %d sheds %d units for an excess of %d (heaviest shed %d)", o, u.left[o], excess, u.heaviestLeft[o])
		}
	}
	return nil
}

// units is the churn of a placement in weight units.
type units struct {
	excess       map[int]int // per available pod: current load above the capacity
	left         map[int]int // per available pod: the weight of the targets that left it
	heaviestLeft map[int]int
	gone         int // the weight of the targets whose pod is gone: it all moves
	lowerBound   int // gone + the sum of the excesses: what any placement moves at least
	moved        int // the weight of the targets that moved
}

func movedUnits(n normalized, r Result) units {
	u := units{excess: map[int]int{}, left: map[int]int{}, heaviestLeft: map[int]int{}}
	current := map[int]int{}
	for _, o := range n.pods {
		current[o] = 0
	}
	for name, o := range n.current {
		if !n.podSet[o] {
			u.gone += n.weights[name]
			continue
		}
		current[o] += n.weights[name]
	}
	for o, l := range current {
		u.excess[o] = max(0, l-r.Capacity)
		u.lowerBound += u.excess[o]
	}
	u.lowerBound += u.gone
	for _, m := range r.Moves {
		w := n.weights[m.Target]
		u.moved += w
		if n.podSet[m.From] {
			u.left[m.From] += w
			u.heaviestLeft[m.From] = max(u.heaviestLeft[m.From], w)
		}
	}
	return u
}
