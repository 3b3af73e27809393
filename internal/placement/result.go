package placement

// Result is the outcome of Place.
type Result struct {
	// Capacity is the bound on every pod's load, in weight units, that this
	// placement used: the fixed podCapacity or the automatic one (with
	// FillByWeight, raised when a target would otherwise find no room).
	Capacity int
	// Assignments maps every assigned target's name to its pod's ordinal.
	Assignments map[string]int
	// Load maps every available pod's ordinal to the total weight of the
	// targets assigned to it (0 for an empty pod). No load exceeds Capacity.
	Load map[int]int
	// Unassigned lists, sorted, the targets that fit on no pod.
	Unassigned []string
	// Oversized lists, sorted, the targets heavier than a fixed podCapacity.
	// They are also in Unassigned, and no number of pods will take them.
	// Automatic capacity is never smaller than the heaviest target, so this
	// is empty then.
	Oversized []string
	// Moves lists, sorted by target name, the targets that move. A target
	// moves when it had a current pod (available or gone) and ends on another
	// pod or on none. A target without a current pod that gets one is not a
	// move, and neither is a target that stays.
	Moves []Move
	// LowerBoundMoves is the fewest moves any placement within Capacity must
	// make from the current assignment: every target whose pod is gone, plus,
	// for every available pod whose current targets weigh more than Capacity,
	// the fewest of them whose removal brings it within Capacity (the
	// heaviest first; with weight 1 that is the excess count). With every
	// weight 1 and no target away from its Last pod, len(Moves) always
	// equals it, and with FillByWeight whatever the weights; a target going
	// back to its last pod is a move on top.
	LowerBoundMoves int
	// Returned counts the targets that went back to their Last pod, with a
	// current pod (a move) or without one.
	Returned int
}

// Move is a target leaving its pod.
type Move struct {
	// Target is the target's name.
	Target string
	// From is the ordinal of the pod the target was on; that pod may be gone.
	From int
	// To is the ordinal of the pod the target goes to, or NoPod.
	To int
}

// NoPod is the Move.To of a target that is left without a pod.
const NoPod = -1
