package placement

import "slices"

// Place decides which pod each target goes to; the package documentation
// describes how. An Input.Fill other than FillByName and FillByWeight is read
// as FillByName.
//
// Place is a pure function: it reads nothing but its input, and the same
// input in any order gives the same Result. It accepts any input and never
// panics. Input that Validate rejects is read leniently: negative pod
// ordinals and duplicates are ignored, a negative podCapacity means
// automatic, a weight below 1 counts as 1 and one above MaxWeight as
// MaxWeight, a name given twice is one target with the larger weight, and a
// negative current ordinal means no current pod.
//
// Place costs one score per open pod for each target it places, and sorting
// by name the targets it places (not those that stay); memory grows with the
// number of targets plus the number of pods, never with their product.
// FillByWeight adds a radix sort of the targets it places by weight, and,
// when it must raise its capacity, places again for each capacity its
// bisection tries (about log2 of the heaviest weight times).
func Place(in Input) Result {
	if r, ok := tryPlace(in); ok {
		return r
	}
	in.Targets = mergeDuplicates(in.Targets)
	r, _ := tryPlace(in)
	return r
}

// tryPlace places the targets. It reports false, with a meaningless result,
// when a name is given twice: finding out costs next to nothing on the way,
// where merging duplicates up front would cost a map of all names.
func tryPlace(in Input) (Result, bool) {
	pods := newPodSet(in.Pods)
	entries := newEntries(in.Targets, in.Current, in.Last, &pods)
	fill := in.Fill
	if fill != FillByWeight {
		fill = FillByName
	}
	p := &planner{
		targets:   in.Targets,
		pods:      pods,
		entries:   entries,
		fill:      fill,
		capacity:  capacityFor(fill, in.PodCapacity, entries, pods.len()),
		load:      make([]int, pods.len()),
		returning: slices.ContainsFunc(entries, func(e entry) bool { return e.away() }),
	}
	p.keepCurrent()
	p.queueByName()
	if p.queueHasDuplicates() {
		return Result{}, false
	}
	if fill == FillByWeight {
		if !p.fillHeaviestFirst(in.PodCapacity > 0) {
			return Result{}, false
		}
	} else {
		p.assignRest()
	}
	return p.result(in.PodCapacity > 0)
}

// planner holds one placement while it is being decided.
type planner struct {
	targets  []Target
	pods     podSet
	entries  []entry // entry i is targets[i]
	fill     Fill
	capacity int
	load     []int    // per pod index
	queue    []queued // the entries left to place after keepCurrent, by name
	// order, when not nil, is the order in which assignRest places the
	// queue: positions in queue, heaviest first (FillByWeight).
	order      []int32
	lowerBound int
	// returning tells whether some target has a last pod other than its
	// current one; returned counts those that went back to it, and returns
	// lists, in no order, those of them that left a current pod to do so.
	returning bool
	returned  int
	returns   []Move
}
