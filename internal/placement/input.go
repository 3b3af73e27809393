package placement

// Input is everything Place needs to know.
type Input struct {
	// Pods are the ordinals of the pods that can take targets, normally the
	// ready pods 0..n-1 of a StatefulSet. Any set of non-negative ordinals
	// works; order does not matter.
	Pods []int
	// PodCapacity bounds the load of every pod in weight units. Zero means
	// automatic: see Capacity.
	PodCapacity int
	// Targets are the targets to place; order does not matter.
	Targets []Target
	// Current maps a target's name to the ordinal of the pod it is on now.
	// An ordinal that is not in Pods names a pod that is gone. Entries for
	// names that are not in Targets are ignored: those targets were deleted.
	Current map[string]int
	// Last maps a target's name to the ordinal of the pod it was placed on
	// before it had to leave it, for a target that is not on that pod now
	// (it is on another pod, or on none) and should go back once the pod is
	// available again: after a full restart, for example, the pods come back
	// one by one and each takes its own targets back. An entry equal to the
	// target's current pod, or for a name not in Targets, is ignored.
	Last map[string]int
	// Fill is how the pods are filled, and with it the automatic capacity:
	// FillByName (the zero value) or FillByWeight.
	Fill Fill
}

// Target is one target to place.
type Target struct {
	// Name identifies the target, for example "namespace/name". It is the
	// only thing its scores depend on.
	Name string
	// Weight is the target's cost in capacity units, from 1 to MaxWeight.
	// Zero means the default, 1.
	Weight int
}

// MaxWeight is the largest weight a target can have. A weight is a relative
// cost; the bound keeps every sum of weights far from overflowing.
const MaxWeight = 1_000_000

// weight is the target's weight with the default applied.
func (t Target) weight() int {
	if t.Weight == 0 {
		return 1
	}
	return t.Weight
}
