package plan

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzPlan feeds arbitrary bytes to the plan subcommand. It must never
// panic; it answers with status 0 and a consistent plan, or with status 2
// and exactly one line on stderr. The seed corpus is in testdata/fuzz/FuzzPlan.
func FuzzPlan(f *testing.F) {
	f.Add([]byte(`{"pods": 3, "targets": ["a", "b", {"name": "c", "weight": 2}], "current": {"a": 4}}`), false)
	f.Fuzz(func(t *testing.T, input []byte, table bool) {
		var args []string
		if table {
			args = []string{"--format", "table"}
		}
		status, stdout, stderr := run(args, bytes.NewReader(input))
		switch status {
		case 0:
			if stderr != "" {
				t.Fatalf("status 0 with stderr %q", stderr)
			}
			if !table {
				checkAnswer(t, input, stdout)
			}
		case 2:
			if stdout != "" || !strings.HasPrefix(stderr, "plan: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Fatalf("status 2 with stdout %q and stderr %q: want one line on stderr", stdout, stderr)
			}
		default:
			t.Fatalf("status %d for in-memory input", status)
		}
	})
}

// checkAnswer checks the JSON answer against the scenario it answers.
func checkAnswer(t *testing.T, input []byte, stdout string) {
	t.Helper()
	s, err := readScenario(bytes.NewReader(input), maxInput)
	if err != nil {
		t.Fatalf("answered a scenario that does not read: %v", err)
	}
	var a answer
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, stdout)
	}
	if a.Assignments == nil || a.Unassigned == nil || a.Oversized == nil || a.Load == nil || a.Moves == nil {
		t.Fatalf("null in the answer: %s", stdout)
	}
	if len(a.Load) != s.pods || len(a.Assignments)+len(a.Unassigned) != len(s.targets) {
		t.Fatalf("answer does not cover %d pods and %d targets: %s", s.pods, len(s.targets), stdout)
	}
	weights := map[string]int{}
	allOne := true
	for _, tg := range s.targets {
		weights[tg.Name] = max(tg.Weight, 1)
		allOne = allOne && weights[tg.Name] == 1
	}
	load := make([]int, s.pods)
	for name, ordinal := range a.Assignments {
		if ordinal < 0 || ordinal >= s.pods {
			t.Fatalf("%q assigned to pod %d of %d", name, ordinal, s.pods)
		}
		load[ordinal] += weights[name]
	}
	for ordinal, l := range a.Load {
		if l != load[ordinal] || l > a.Capacity {
			t.Fatalf("pod %d: load %d, targets weigh %d, capacity %d", ordinal, l, load[ordinal], a.Capacity)
		}
	}
	if !slices.IsSorted(a.Unassigned) || len(a.Moves) < a.LowerBoundMoves || (allOne && len(a.Moves) != a.LowerBoundMoves) {
		t.Fatalf("unsorted unassigned or moves below the lower bound: %s", stdout)
	}
}
