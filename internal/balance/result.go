package balance

// Result is the outcome of Balance.
type Result struct {
	// Targets holds one Allocation per input target, sorted by name.
	Targets []Allocation
	// Placed is the sum of every target's Desired.
	Placed int
	// Missing is the number of replicas that count as missing in blocked
	// targets (see Allocation.Missing): the replacements Balance looks for
	// room for in the other targets.
	Missing int
	// Unplaced is how many of Replicas plus Missing no target could take:
	// every target the policy may grow is at its maximum, and blocked
	// targets take no replacements.
	Unplaced int
	// Excess is how many replicas Placed holds beyond Replicas plus Missing
	// because the targets' minimums add up to more. Excess and Unplaced are
	// never both above zero, and always
	// Placed == Replicas + Missing + Excess - Unplaced.
	Excess int
}

// Allocation is what Balance decides for one target.
type Allocation struct {
	// Name is the target's name.
	Name string
	// Desired is the replica count the controller writes to the target's
	// Scale subresource: Base plus Replacements.
	Desired int
	// Base is what the policy gives the target without the fallback, that is
	// with no target blocked.
	Base int
	// Replacements is how many replicas the target holds in place of
	// replicas that did not start in blocked targets. A blocked target holds
	// none.
	Replacements int
	// Blocked says that the target's oldest not-started pod has waited longer
	// than the startup timeout. A blocked target keeps its Base, so that its
	// pods may still start, and takes no replacements.
	Blocked bool
	// Missing is, for a blocked target, how many of its Base replicas have
	// not started: Base minus Started, at least 0. It is 0 for every other
	// target.
	Missing int
	// Reasons explain, for people, why Desired is what it is: a maximum
	// reached, a minimum kept, a fallback. Nil when the policy alone decided
	// and no limit was reached.
	Reasons []string
}
