package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// run calls Main with buffers.
func run(args []string, stdin io.Reader) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = Main(args, stdin, &out, &errOut)
	return status, out.String(), errOut.String()
}

func TestMainAnswersValidScenarios(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  answer
	}{
		{
			name:  "places targets given as names and as objects",
			input: `{"pods": 2, "targets": ["a", {"name": "b"}, {"name": "c", "weight": 2}]}`,
			want: answer{Capacity: 3, Assignments: map[string]int{"a": 0, "b": 1, "c": 1},
				Unassigned: []string{}, Oversized: []string{}, Load: []int{1, 3}, Moves: []move{}},
		},
		{
			name:  "leaves every target unassigned with no pods, lists as empty arrays",
			input: `{"pods": 0, "targets": ["a", "b"]}`,
			want: answer{Capacity: 0, Assignments: map[string]int{},
				Unassigned: []string{"a", "b"}, Oversized: []string{}, Load: []int{}, Moves: []move{}},
		},
		{
			name:  "moves a target whose pod is gone and reports the lower bound",
			input: `{"pods": 1, "targets": ["a"], "current": {"a": 3}}`,
			want: answer{Capacity: 1, Assignments: map[string]int{"a": 0},
				Unassigned: []string{}, Oversized: []string{}, Load: []int{1},
				Moves: []move{{Target: "a", From: 3, To: 0}}, LowerBoundMoves: 1},
		},
		{
			name:  "moves a target to -1 when no pod has room",
			input: `{"pods": 1, "podCapacity": 1, "targets": ["a", "b"], "current": {"a": 0, "b": 5}}`,
			want: answer{Capacity: 1, Assignments: map[string]int{"a": 0},
				Unassigned: []string{"b"}, Oversized: []string{}, Load: []int{1},
				Moves: []move{{Target: "b", From: 5, To: -1}}, LowerBoundMoves: 1},
		},
		{
			name:  "reports a target heavier than podCapacity as oversized",
			input: `{"pods": 3, "podCapacity": 2, "targets": [{"name": "big", "weight": 3}]}`,
			want: answer{Capacity: 2, Assignments: map[string]int{},
				Unassigned: []string{"big"}, Oversized: []string{"big"}, Load: []int{0, 0, 0}, Moves: []move{}},
		},
		{
			name:  "ignores current entries of targets that are not listed",
			input: `{"pods": 1, "targets": [], "current": {"deleted": 0}}`,
			want: answer{Capacity: 0, Assignments: map[string]int{},
				Unassigned: []string{}, Oversized: []string{}, Load: []int{0}, Moves: []move{}},
		},
		{
			name:  "accepts a document without targets, surrounded by white space",
			input: " \n\t{\"pods\": 2}\n\n",
			want: answer{Capacity: 0, Assignments: map[string]int{},
				Unassigned: []string{}, Oversized: []string{}, Load: []int{0, 0}, Moves: []move{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := run(nil, strings.NewReader(tt.input))
			if status != 0 || stderr != "" {
				t.Fatalf("status %d, stderr %q", status, stderr)
			}
			if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "\n") {
				t.Errorf("stdout is not one line: %q", stdout)
			}
			var got answer
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("answer\n got %+v\nwant %+v", got, tt.want)
			}
			for _, list := range []string{`"unassigned":[`, `"oversized":[`, `"moves":[`, `"load":[`, `"assignments":{`} {
				if !strings.Contains(stdout, list) {
					t.Errorf("stdout lacks %s (null instead of empty?): %s", list, stdout)
				}
			}
		})
	}
}

func TestMainRejectsBadInputWithOneLine(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // the line on stderr, without "plan: " and the newline
	}{
		{"rejects an empty document", "", "empty input: want one JSON object on standard input"},
		{"rejects white space alone", "  \n", "empty input: want one JSON object on standard input"},
		{"rejects malformed JSON", `{"pods": 3,}`, "malformed JSON at byte 12: invalid character '}' looking for beginning of object key string"},
		{"rejects a truncated document", `{"pods": 3`, "malformed JSON: the document ends too early"},
		{"rejects trailing garbage", `{"pods": 3} x`, "unexpected data after the JSON document: give exactly one object"},
		{"rejects a second document", `{"pods": 3} {"pods": 4}`, "unexpected data after the JSON document: give exactly one object"},
		{"rejects a document that is not an object", `[1, 2]`, "input: must be an object, got array"},
		{"rejects a missing pods", `{"targets": ["a"]}`, "pods: missing: give the number of pods, 0 or more"},
		{"rejects negative pods", `{"pods": -1}`, "pods: must be an integer from 0 to 10000, got -1"},
		{"rejects too many pods", `{"pods": 10001}`, "pods: must be an integer from 0 to 10000, got 10001"},
		{"rejects fractional pods", `{"pods": 2.5}`, "pods: must be an integer from 0 to 10000, got 2.5"},
		{"rejects pods with an exponent", `{"pods": 1e2}`, "pods: must be an integer from 0 to 10000, got 1e2"},
		{"rejects pods as a string", `{"pods": "3"}`, "pods: must be an integer from 0 to 10000, got string"},
		{"rejects null pods", `{"pods": null}`, "pods: must be an integer from 0 to 10000, got null"},
		{"rejects a negative capacity", `{"pods": 1, "podCapacity": -2}`, "podCapacity: must be an integer from 0 to any size, got -2"},
		{"rejects a capacity beyond 64 bits", `{"pods": 1, "podCapacity": 99999999999999999999}`, "podCapacity: must be an integer from 0 to any size, got 99999999999999999999"},
		{"rejects an unknown member", `{"pods": 1, "podcapacity": 2}`, `input: unknown member "podcapacity" (want pods, podCapacity, targets, current)`},
		{"rejects a member given twice", `{"pods": 1, "pods": 2}`, `input: member "pods" given twice`},
		{"rejects targets that are not an array", `{"pods": 1, "targets": {"a": 1}}`, "targets: must be an array, got object"},
		{"rejects a target that is a number", `{"pods": 1, "targets": ["a", 7]}`, "targets[1]: must be a target name or an object with a name and a weight, got number"},
		{"rejects an empty target name", `{"pods": 1, "targets": [""]}`, "targets[0]: must not be empty"},
		{"rejects a target object without a name", `{"pods": 1, "targets": [{"weight": 2}]}`, "targets[0]: missing name"},
		{"rejects a target name that is not a string", `{"pods": 1, "targets": [{"name": 5}]}`, "targets[0].name: must be a string, got number"},
		{"rejects an unknown target member", `{"pods": 1, "targets": [{"name": "a", "wieght": 2}]}`, `targets[0]: unknown member "wieght" (want name, weight)`},
		{"rejects a negative weight", `{"pods": 1, "targets": [{"name": "a", "weight": -1}]}`, "targets[0].weight: must be an integer from 1 to 1000000, got -1"},
		{"rejects weight 0", `{"pods": 1, "targets": [{"name": "a", "weight": 0}]}`, "targets[0].weight: must be an integer from 1 to 1000000, got 0"},
		{"rejects a duplicate target name", `{"pods": 1, "targets": ["ns/r1", "ns/r2", {"name": "ns/r3"}, "ns/r1"]}`, `targets[3]: duplicate target name "ns/r1"`},
		{"rejects current that is not an object", `{"pods": 1, "current": ["a"]}`, "current: must be an object, got array"},
		{"rejects a negative current ordinal", `{"pods": 1, "targets": ["a"], "current": {"a": -1}}`, `current["a"]: must be an integer from 0 to any size, got -1`},
		{"rejects a current ordinal that is not a number", `{"pods": 1, "current": {"a": "0"}}`, `current["a"]: must be an integer from 0 to any size, got string`},
		{"rejects a current entry given twice", `{"pods": 1, "current": {"a": 0, "a": 1}}`, `current: member "a" given twice`},
		{"keeps a name with a newline on one line", `{"pods": 1, "targets": ["a\nb", "a\nb"]}`, `targets[1]: duplicate target name "a\nb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := run(nil, strings.NewReader(tt.input))
			if status != 2 {
				t.Errorf("status %d, want 2", status)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if want := "plan: " + tt.want + "\n"; stderr != want {
				t.Errorf("stderr\n got %q\nwant %q", stderr, want)
			}
		})
	}
}

func TestMainFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantStdout string // a substring
		wantStderr string // exact
	}{
		{"prints usage for -h", []string{"-h"}, 0, "usage: plan [-o json|table] < scenario.json", ""},
		{"prints the live usage for -h", []string{"-h"}, 0, "plan --cluster NAMESPACE/NAME [--replicas N] [--pod-capacity C] [-o json|table]", ""},
		{"answers in a table with -o table", []string{"-o", "table"}, 0, "POD  LOAD  TARGETS", ""},
		{"answers in a table with --output=table", []string{"--output=table"}, 0, "POD  LOAD  TARGETS", ""},
		{"rejects --replicas without --cluster", []string{"--replicas", "3"}, 2, "", "plan: --replicas needs --cluster: a scenario on standard input says pods and podCapacity itself\n"},
		{"rejects --pod-capacity without --cluster", []string{"--pod-capacity", "3"}, 2, "", "plan: --pod-capacity needs --cluster: a scenario on standard input says pods and podCapacity itself\n"},
		{"rejects --kubeconfig without --cluster", []string{"--kubeconfig", "k"}, 2, "", "plan: --kubeconfig needs --cluster: a scenario on standard input says pods and podCapacity itself\n"},
		{"rejects a cluster without a namespace", []string{"--cluster", "telemetry"}, 2, "", "plan: --cluster must be NAMESPACE/NAME, got \"telemetry\"\n"},
		{"rejects a cluster with two slashes", []string{"--cluster", "a/b/c"}, 2, "", "plan: --cluster must be NAMESPACE/NAME, got \"a/b/c\"\n"},
		{"rejects negative replicas", []string{"--cluster", "a/b", "--replicas", "-1"}, 2, "", "plan: invalid value \"-1\" for flag -replicas: --replicas must be an integer from 0 up, got \"-1\"\n"},
		{"rejects a pod capacity that is no number", []string{"--cluster", "a/b", "--pod-capacity", "x"}, 2, "", "plan: invalid value \"x\" for flag -pod-capacity: --pod-capacity must be an integer from 0 up, got \"x\"\n"},
		{"rejects a zero timeout", []string{"--cluster", "a/b", "--timeout", "0s"}, 2, "", "plan: --timeout must be above 0, got 0s\n"},
		{"prints usage for --help", []string{"--help"}, 0, "Exit status:", ""},
		{"answers in JSON with --format json", []string{"--format", "json"}, 0, `"capacity":1`, ""},
		{"answers in a table with --format=table", []string{"--format=table"}, 0, "POD  LOAD  TARGETS", ""},
		{"rejects an unknown format", []string{"--format", "yaml"}, 2, "", "plan: --output (-o, --format) must be json or table, got \"yaml\"\n"},
		{"rejects an unknown flag", []string{"--pods", "3"}, 2, "", "plan: flag provided but not defined: -pods\n"},
		{"rejects a flag without its value", []string{"--format"}, 2, "", "plan: flag needs an argument: -format\n"},
		{"rejects a positional argument", []string{"scenario.json"}, 2, "", "plan: unexpected argument \"scenario.json\": the scenario is read from standard input, a live Cluster named with --cluster\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := run(tt.args, strings.NewReader(`{"pods": 1, "targets": ["a"]}`))
			if status != tt.wantStatus {
				t.Errorf("status %d, want %d", status, tt.wantStatus)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q lacks %q", stdout, tt.wantStdout)
			}
			if stderr != tt.wantStderr {
				t.Errorf("stderr %q, want %q", stderr, tt.wantStderr)
			}
		})
	}
}

func TestMainTableShowsLoadsUnassignedAndMoves(t *testing.T) {
	input := `{"pods": 2, "podCapacity": 1, "targets": ["a", "b", {"name": "c", "weight": 2}], "current": {"a": 1, "b": 7}}`
	status, stdout, stderr := run([]string{"--format", "table"}, strings.NewReader(input))
	if status != 0 || stderr != "" {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	want := `capacity: 1 (podCapacity)

POD  LOAD  TARGETS
0    1     1
1    1     1

unassigned: 1
  c  (heavier than podCapacity)

moves: 1 (lower bound 1)
  TARGET  FROM  TO
  b       7     0
`
	if stdout != want {
		t.Errorf("table\n got:\n%s\nwant:\n%s", stdout, want)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

func TestMainReportsReadAndWriteFailuresWithStatus1(t *testing.T) {
	status, _, stderr := run(nil, failingReader{})
	if status != 1 || stderr != "plan: read input: disk on fire\n" {
		t.Errorf("read failure: status %d, stderr %q", status, stderr)
	}
	var errOut bytes.Buffer
	status = Main(nil, strings.NewReader(`{"pods": 1}`), failingWriter{}, &errOut)
	if status != 1 || errOut.String() != "plan: write answer: pipe closed\n" {
		t.Errorf("write failure: status %d, stderr %q", status, errOut.String())
	}
}

func TestReadScenarioRejectsInputLargerThanTheLimit(t *testing.T) {
	huge := io.MultiReader(strings.NewReader(`{"pods": 1, "targets": ["`), endless{})
	if _, err := readScenario(huge, 1<<20); !errors.Is(err, errTooLarge) {
		t.Errorf("endless input: %v, want errTooLarge", err)
	}
	exact := `{"pods": 1}`
	if _, err := readScenario(strings.NewReader(exact), int64(len(exact))); err != nil {
		t.Errorf("input of exactly the limit: %v", err)
	}
}

// endless is an endless run of the letter a.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestMainLiveWithoutKubeconfigSaysSo(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	status, stdout, stderr := run([]string{"--cluster", "ns/telemetry"}, strings.NewReader(""))
	if status != 1 || stdout != "" {
		t.Errorf("status %d, stdout %q; want 1 and nothing", status, stdout)
	}
	if want := "plan: no kubeconfig: give --kubeconfig, set KUBECONFIG, or write ~/.kube/config\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

func TestMainLiveWithAMissingKubeconfigFileNamesIt(t *testing.T) {
	status, _, stderr := run([]string{"--cluster", "ns/telemetry", "--kubeconfig", "/nonexistent/kubeconfig"}, strings.NewReader(""))
	if status != 1 || !strings.Contains(stderr, "load kubeconfig") || !strings.Contains(stderr, "/nonexistent/kubeconfig") {
		t.Errorf("status %d, stderr %q; want 1 naming the file", status, stderr)
	}
}
