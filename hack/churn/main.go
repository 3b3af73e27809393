// Command churn prints, as markdown, how many targets move at each step of a
// scale sequence of 1 to 10 pods and back to 1, and how evenly they are
// spread, for the operator's placement and for the strategies it is measured
// against:
//
//   - this: package placement, automatic capacity, each result fed back as
//     the next current assignment, as the operator does;
//   - baseline: the public gNMIc operator's placement, fed back the same way;
//   - modulo: XXH64(name) mod pods;
//   - ring: a consistent-hash ring, XXH64, 100 tokens per pod;
//   - lower bound: the fewest moves any placement within the capacity could
//     make from this algorithm's previous assignment (each strategy starts
//     a step from its own previous assignment, so theirs differ slightly).
//
// Each cell is "moves (max/mean load)". A last table shows how evenly the
// scores alone spread targets, with a capacity that does not bind: the
// operator's score against the baseline's FNV-1a over "name:index".
// Run it with `go run ./hack/churn`.
package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/placement/baseline"
)

// assignment maps a target name to its pod ordinal.
type assignment map[string]int

// strategy places names on pods 0..pods-1, knowing where they are now.
type strategy struct {
	name  string
	place func(names []string, pods int, current assignment) assignment
}

var strategies = []strategy{
	{"this", placeThis},
	{"baseline", placeBaseline},
	{"modulo", placeModulo},
	{"ring", placeRing},
}

func main() {
	for _, targets := range []int{300, 10_000} {
		if err := report(os.Stdout, targets); err != nil {
			fmt.Fprintf(os.Stderr, "churn: %v\n", err)
			os.Exit(1)
		}
	}
	if err := reportSpread(os.Stdout, 10_000); err != nil {
		fmt.Fprintf(os.Stderr, "churn: %v\n", err)
		os.Exit(1)
	}
}

// reportSpread writes max/mean load when every target gets its favourite
// pod, that is when the capacity does not bind.
func reportSpread(w io.Writer, targets int) error {
	names := targetNames(targets)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d targets, capacity not binding: max/mean load from the scores alone\n\n", targets)
	b.WriteString("| pods | this (XXH64 + SplitMix64) | baseline (FNV-1a of \"name:index\") |\n|---:|---:|---:|\n")
	for _, pods := range []int{3, 5, 10, 12} {
		in := thisInput(names, pods, nil)
		in.PodCapacity = targets
		this := placement.Place(in).Assignments
		base := fromBaseline(baseline.Place(names, pods, targets, nil))
		fmt.Fprintf(&b, "| %d | %.3f | %.3f |\n", pods, maxOverMean(this, pods, targets), maxOverMean(base, pods, targets))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// scaleSequence is 1, 2, ..., 10, 9, ..., 1.
func scaleSequence() []int {
	var seq []int
	for p := 1; p <= 10; p++ {
		seq = append(seq, p)
	}
	for p := 9; p >= 1; p-- {
		seq = append(seq, p)
	}
	return seq
}

func targetNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("ns-%d/router-%05d", i%5, i)
	}
	return names
}

// report runs every strategy through the scale sequence and writes a table.
func report(w io.Writer, targets int) error {
	names := targetNames(targets)
	seq := scaleSequence()
	current := make([]assignment, len(strategies))
	for i, s := range strategies {
		current[i] = s.place(names, seq[0], nil)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n%d targets: moves (max/mean load) per step\n\n", targets)
	fmt.Fprintf(&b, "| pods |")
	for _, s := range strategies {
		fmt.Fprintf(&b, " %s |", s.name)
	}
	fmt.Fprintf(&b, " lower bound |\n|---|")
	b.WriteString(strings.Repeat("---:|", len(strategies)+1) + "\n")

	totals := make([]int, len(strategies))
	worst := make([]float64, len(strategies))
	totalBound := 0
	for step := 1; step < len(seq); step++ {
		pods := seq[step]
		bound := placement.Place(thisInput(names, pods, current[0])).LowerBoundMoves
		totalBound += bound
		fmt.Fprintf(&b, "| %d→%d |", seq[step-1], pods)
		for i, s := range strategies {
			next := s.place(names, pods, current[i])
			moved, spread := moves(current[i], next), maxOverMean(next, pods, len(names))
			totals[i] += moved
			worst[i] = max(worst[i], spread)
			fmt.Fprintf(&b, " %d (%.2f) |", moved, spread)
			current[i] = next
		}
		fmt.Fprintf(&b, " %d |\n", bound)
	}
	fmt.Fprintf(&b, "| **total (worst)** |")
	for i := range strategies {
		fmt.Fprintf(&b, " **%d (%.2f)** |", totals[i], worst[i])
	}
	fmt.Fprintf(&b, " **%d** |\n", totalBound)
	_, err := io.WriteString(w, b.String())
	return err
}

// moves counts the targets whose pod changed.
func moves(before, after assignment) int {
	n := 0
	for name, pod := range before {
		if to, ok := after[name]; !ok || to != pod {
			n++
		}
	}
	return n
}

// maxOverMean is the heaviest pod's load over the mean load.
func maxOverMean(a assignment, pods, targets int) float64 {
	load := make([]int, pods)
	for _, pod := range a {
		load[pod]++
	}
	return float64(slices.Max(load)) * float64(pods) / float64(targets)
}

func thisInput(names []string, pods int, current assignment) placement.Input {
	in := placement.Input{Pods: make([]int, pods), Targets: make([]placement.Target, len(names)), Current: current}
	for i := range in.Pods {
		in.Pods[i] = i
	}
	for i, name := range names {
		in.Targets[i] = placement.Target{Name: name}
	}
	return in
}

func placeThis(names []string, pods int, current assignment) assignment {
	return placement.Place(thisInput(names, pods, current)).Assignments
}

func placeBaseline(names []string, pods int, current assignment) assignment {
	byPod := baseline.Assignment{}
	for name, pod := range current {
		byPod[pod] = append(byPod[pod], name)
	}
	return fromBaseline(baseline.Place(names, pods, 0, byPod))
}

func fromBaseline(byPod baseline.Assignment) assignment {
	placed := assignment{}
	for pod, names := range byPod {
		for _, name := range names {
			placed[name] = pod
		}
	}
	return placed
}

func placeModulo(names []string, pods int, _ assignment) assignment {
	placed := assignment{}
	for _, name := range names {
		placed[name] = int(xxhash.Sum64String(name) % uint64(pods))
	}
	return placed
}

// placeRing puts each name on the pod owning the first token at or after
// the name's hash, going round the ring.
func placeRing(names []string, pods int, _ assignment) assignment {
	type token struct {
		hash uint64
		pod  int
	}
	var ring []token
	for pod := range pods {
		for i := range 100 {
			ring = append(ring, token{xxhash.Sum64String(fmt.Sprintf("pod-%d#%d", pod, i)), pod})
		}
	}
	slices.SortFunc(ring, func(a, b token) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.pod, b.pod))
	})
	placed := assignment{}
	for _, name := range names {
		h := xxhash.Sum64String(name)
		i, _ := slices.BinarySearchFunc(ring, h, func(t token, h uint64) int { return cmp.Compare(t.hash, h) })
		placed[name] = ring[i%len(ring)].pod
	}
	return placed
}
