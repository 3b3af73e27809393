package placement

import "strconv"

// Fill chooses how a placement fills the pods: in which order the targets
// without a pod are placed, how an over-capacity pod sheds, and what the
// automatic capacity is. With every weight 1 both fills give the same result.
type Fill int

const (
	// FillByName places the targets without a pod in alphabetical order, an
	// over-capacity pod keeps its targets best-scoring first while they fit,
	// and the automatic capacity is ceil(total weight / pods) + heaviest - 1.
	// It counts weights but does not balance them: the widening by the
	// heaviest weight lets pods fill well above the mean.
	FillByName Fill = iota
	// FillByWeight balances weights: the targets without a pod are placed
	// heaviest first (alphabetically among equal weights), an over-capacity
	// pod sheds the fewest targets it can (light ones first), and the
	// automatic capacity is the balanced capacity, raised only when the
	// targets kept in place leave a target without room. The package
	// documentation describes it and proves its bounds.
	FillByWeight
)

// String names the fill as the documentation does.
func (f Fill) String() string {
	switch f {
	case FillByName:
		return "ByName"
	case FillByWeight:
		return "ByWeight"
	default:
		return "Fill(" + strconv.Itoa(int(f)) + ")"
	}
}
