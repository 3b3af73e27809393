package placement

import (
	"fmt"
	"slices"
	"strings"
)

// normalized is an input read the way Place documents it reads input: what
// the invariants are stated over.
type normalized struct {
	pods    []int          // sorted, unique, non-negative
	podSet  map[int]bool   // the same pods
	weights map[string]int // target name → weight
	names   []string       // sorted target names
	current map[string]int // target name → current ordinal (only targets, only >= 0)
	last    map[string]int // target name → last ordinal (only targets, only >= 0, never the current one)
}

func normalize(in Input) normalized {
	n := normalized{podSet: map[int]bool{}, weights: map[string]int{}, current: map[string]int{}, last: map[string]int{}}
	for _, o := range in.Pods {
		if o >= 0 && !n.podSet[o] {
			n.podSet[o] = true
			n.pods = append(n.pods, o)
		}
	}
	slices.Sort(n.pods)
	for _, t := range in.Targets {
		w := t.Weight
		if w == 0 {
			w = 1
		}
		w = min(max(w, 1), MaxWeight)
		if old, ok := n.weights[t.Name]; !ok || w > old {
			n.weights[t.Name] = w
		}
	}
	for name := range n.weights {
		n.names = append(n.names, name)
		if o, ok := in.Current[name]; ok && o >= 0 {
			n.current[name] = o
		}
	}
	for name := range n.weights {
		if o, ok := in.Last[name]; ok && o >= 0 {
			if from, ok := n.current[name]; !ok || from != o {
				n.last[name] = o
			}
		}
	}
	slices.Sort(n.names)
	return n
}

func (n normalized) allWeightOne() bool {
	for _, w := range n.weights {
		if w != 1 {
			return false
		}
	}
	return true
}

// checkInvariants returns the first guarantee that r breaks for in, or nil.
func checkInvariants(in Input, r Result) error {
	n := normalize(in)
	if err := checkShape(n, r); err != nil {
		return err
	}
	if err := checkCapacity(in, n, r); err != nil {
		return err
	}
	if err := checkMoves(n, r); err != nil {
		return err
	}
	return checkStability(n, r)
}

// checkShape: every target is assigned to an available pod or unassigned,
// never both; loads add up; lists are sorted and never nil.
func checkShape(n normalized, r Result) error {
	if r.Assignments == nil || r.Load == nil || r.Unassigned == nil || r.Oversized == nil || r.Moves == nil {
		return fmt.Errorf("a map or list of the result is nil: %+v", r)
	}
	if len(r.Assignments)+len(r.Unassigned) != len(n.names) {
		return fmt.Errorf("%d assigned + %d unassigned != %d targets", len(r.Assignments), len(r.Unassigned), len(n.names))
	}
	if !slices.IsSorted(r.Unassigned) || !slices.IsSorted(r.Oversized) {
		return fmt.Errorf("unassigned or oversized not sorted")
	}
	load := map[int]int{}
	for name, o := range r.Assignments {
		w, ok := n.weights[name]
		if !ok {
			return fmt.Errorf("assigned %q is not a target", name)
		}
		if !n.podSet[o] {
			return fmt.Errorf("%q assigned to pod %d, which is not available", name, o)
		}
		load[o] += w
	}
	for _, name := range r.Unassigned {
		if _, ok := r.Assignments[name]; ok {
			return fmt.Errorf("%q both assigned and unassigned", name)
		}
	}
	if len(r.Load) != len(n.pods) {
		return fmt.Errorf("load has %d pods, want %d", len(r.Load), len(n.pods))
	}
	for _, o := range n.pods {
		if r.Load[o] != load[o] {
			return fmt.Errorf("load of pod %d is %d, its targets weigh %d", o, r.Load[o], load[o])
		}
	}
	return nil
}

// checkCapacity: the capacity is the documented one, never exceeded, and
// targets are unassigned only when they must be.
func checkCapacity(in Input, n normalized, r Result) error {
	want := in.PodCapacity
	if want <= 0 {
		want = 0
		if len(n.pods) > 0 && len(n.names) > 0 {
			total, heaviest := 0, 0
			for _, w := range n.weights {
				total += w
				heaviest = max(heaviest, w)
			}
			want = (total+len(n.pods)-1)/len(n.pods) + heaviest - 1
		}
	}
	if r.Capacity != want {
		return fmt.Errorf("capacity %d, want %d", r.Capacity, want)
	}
	for o, l := range r.Load {
		if l > r.Capacity {
			return fmt.Errorf("pod %d load %d exceeds capacity %d", o, l, r.Capacity)
		}
	}
	var oversized []string
	for _, name := range r.Unassigned {
		w := n.weights[name]
		if in.PodCapacity > 0 && w > r.Capacity {
			oversized = append(oversized, name)
			continue
		}
		// An unassigned target that fits must have found every pod too full.
		for _, o := range n.pods {
			if r.Load[o]+w <= r.Capacity {
				return fmt.Errorf("%q (weight %d) unassigned while pod %d has load %d of %d", name, w, o, r.Load[o], r.Capacity)
			}
		}
	}
	if !slices.Equal(oversized, r.Oversized) {
		return fmt.Errorf("oversized %v, want %v", r.Oversized, oversized)
	}
	if in.PodCapacity <= 0 && len(n.pods) > 0 && len(r.Unassigned) > 0 {
		return fmt.Errorf("automatic capacity left %v unassigned", r.Unassigned)
	}
	if n.allWeightOne() && len(n.pods) > 0 {
		if wantUnassigned := max(0, len(n.names)-len(n.pods)*r.Capacity); len(r.Unassigned) != wantUnassigned {
			return fmt.Errorf("%d unassigned, want %d", len(r.Unassigned), wantUnassigned)
		}
	}
	return nil
}

// checkMoves: moves are exactly the targets that had a pod and end elsewhere;
// never fewer than the lower bound, and exactly it with weight 1 when no
// target is away from its last pod.
func checkMoves(n normalized, r Result) error {
	var want []Move
	for _, name := range n.names {
		from, had := n.current[name]
		if !had {
			continue
		}
		to, ok := r.Assignments[name]
		if !ok {
			to = NoPod
		}
		if to != from {
			want = append(want, Move{Target: name, From: from, To: to})
		}
	}
	if !slices.Equal(want, r.Moves) {
		return fmt.Errorf("moves %v, want %v", r.Moves, want)
	}
	if lb := lowerBound(n, r.Capacity); r.LowerBoundMoves != lb {
		return fmt.Errorf("lower bound %d, want %d", r.LowerBoundMoves, lb)
	}
	if len(r.Moves) < r.LowerBoundMoves {
		return fmt.Errorf("%d moves below the lower bound %d", len(r.Moves), r.LowerBoundMoves)
	}
	if n.allWeightOne() && len(n.last) == 0 && len(r.Moves) != r.LowerBoundMoves {
		return fmt.Errorf("%d moves, lower bound %d", len(r.Moves), r.LowerBoundMoves)
	}
	return nil
}

// lowerBound restates the documented lower bound independently.
func lowerBound(n normalized, capacity int) int {
	onPod := map[int][]int{}
	bound := 0
	for name, o := range n.current {
		if !n.podSet[o] {
			bound++
			continue
		}
		onPod[o] = append(onPod[o], n.weights[name])
	}
	for _, weights := range onPod {
		total := 0
		for _, w := range weights {
			total += w
		}
		slices.Sort(weights)
		for i := len(weights) - 1; i >= 0 && total > capacity; i-- {
			total -= weights[i]
			bound++
		}
	}
	return bound
}

// checkStability: a target on the pod it belongs on (without a last pod
// elsewhere), whose current pod is available and whose pod's targets that
// belong there fit within capacity, stays there; a target whose last pod is
// available and ends on neither it nor its current pod found both full.
func checkStability(n normalized, r Result) error {
	homeLoad := map[int]int{}
	for name, o := range n.current {
		if _, away := n.last[name]; !away {
			homeLoad[o] += n.weights[name]
		}
	}
	for name, o := range n.current {
		if _, away := n.last[name]; !away && n.podSet[o] && homeLoad[o] <= r.Capacity && r.Assignments[name] != o {
			return fmt.Errorf("%q left pod %d although the pod was within capacity", name, o)
		}
	}
	for name, last := range n.last {
		to, ok := r.Assignments[name]
		from, had := n.current[name]
		if !n.podSet[last] || (ok && to == last) || (had && ok && to == from) {
			continue
		}
		for _, o := range []int{last, from} {
			if n.podSet[o] && (o == last || had) && r.Load[o]+n.weights[name] <= r.Capacity {
				return fmt.Errorf("%q ended on %d (ok %v) while its last pod %d or current pod %d had room", name, to, ok, last, from)
			}
		}
	}
	return nil
}

// describe is a compact rendering of an input for failure messages.
func describe(in Input) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pods=%v podCapacity=%d targets=%v current=%v last=%v", in.Pods, in.PodCapacity, in.Targets, in.Current, in.Last)
	return b.String()
}
