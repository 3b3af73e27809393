package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

func writeLiveJSON(w io.Writer, a liveAnswer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(a)
}

// writeLiveTable writes the live plan for people: the change, a row per pod with its targets now and after
// and how many arrive and leave, the targets left unassigned and skipped, and the moves.
func writeLiveTable(w io.Writer, a liveAnswer) error {
	out := bufio.NewWriter(w)
	fmt.Fprintf(out, "cluster %s: replicas %d -> %d, podCapacity %s -> %s (capacity after: %d)\n\n", a.Cluster,
		a.Replicas.Now, a.Replicas.After, capacityName(a.PodCapacity.Now), capacityName(a.PodCapacity.After), a.Capacity)

	in, out2 := map[string]int{}, map[string]int{}
	for _, m := range a.Moves {
		out2[m.From]++
		if m.To != "" {
			in[m.To]++
		}
	}
	var rows bytes.Buffer
	tw := tabwriter.NewWriter(&rows, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tNOW\tAFTER\tIN\tOUT\t")
	for _, p := range a.Pods {
		note := ""
		switch {
		case !p.DesiredNow && p.DesiredAfter:
			note = "added"
		case p.DesiredNow && !p.DesiredAfter:
			note = "removed"
		case !p.DesiredNow && !p.DesiredAfter:
			note = "gone"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\n", p.Name, len(p.Now), afterCount(p), in[p.Name], out2[p.Name], note)
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(rows.String(), "\n") {
		out.WriteString(strings.TrimRight(line, " \n"))
		if strings.HasSuffix(line, "\n") {
			out.WriteString("\n")
		}
	}

	fmt.Fprintf(out, "\nunassigned: %d now, %d after\n", len(a.UnassignedNow), len(a.UnassignedAfter))
	for _, name := range a.UnassignedAfter {
		fmt.Fprintf(out, "  %s\n", name)
	}
	if len(a.Skipped) > 0 {
		fmt.Fprintf(out, "\nskipped (cannot be configured, on no pod): %d\n", len(a.Skipped))
		for _, name := range a.Skipped {
			fmt.Fprintf(out, "  %s\n", name)
		}
	}

	fmt.Fprintf(out, "\nmoves: %d (lower bound %d)\n", len(a.Moves), a.LowerBoundMoves)
	if len(a.Moves) > 0 {
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  TARGET\tFROM\tTO")
		for _, m := range a.Moves {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Target, m.From, dash(m.To))
		}
		tw.Flush()
	}
	return out.Flush()
}

func afterCount(p livePod) string {
	if !p.DesiredAfter && len(p.After) == 0 {
		return "-"
	}
	return strconv.Itoa(len(p.After))
}

func capacityName(c int) string {
	if c == 0 {
		return "automatic"
	}
	return strconv.Itoa(c)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
