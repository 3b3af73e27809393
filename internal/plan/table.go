package plan

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
)

// writeTable writes the answer for people: the capacity, each pod's load and
// target count, the unassigned targets and the moves.
func writeTable(w io.Writer, a answer, automatic bool) error {
	out := bufio.NewWriter(w)
	mode := "podCapacity"
	if automatic {
		mode = "automatic"
	}
	fmt.Fprintf(out, "capacity: %d (%s)\n\n", a.Capacity, mode)

	counts := make([]int, len(a.Load))
	for _, ordinal := range a.Assignments {
		counts[ordinal]++
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tLOAD\tTARGETS")
	for ordinal, load := range a.Load {
		fmt.Fprintf(tw, "%d\t%d\t%d\n", ordinal, load, counts[ordinal])
	}
	tw.Flush()

	fmt.Fprintf(out, "\nunassigned: %d\n", len(a.Unassigned))
	for _, name := range a.Unassigned {
		note := ""
		if _, found := slices.BinarySearch(a.Oversized, name); found {
			note = "  (heavier than podCapacity)"
		}
		fmt.Fprintf(out, "  %s%s\n", name, note)
	}

	fmt.Fprintf(out, "\nmoves: %d (lower bound %d)\n", len(a.Moves), a.LowerBoundMoves)
	if len(a.Moves) > 0 {
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  TARGET\tFROM\tTO")
		for _, m := range a.Moves {
			to := "-"
			if m.To >= 0 {
				to = strconv.Itoa(m.To)
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", m.Target, m.From, to)
		}
		tw.Flush()
	}
	return out.Flush()
}
