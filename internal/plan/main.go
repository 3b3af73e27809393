package plan

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/internal/placement"
)

// Exit statuses of Main.
const (
	exitOK      = 0
	exitFailure = 1 // reading the input or writing the answer failed
	exitUsage   = 2 // bad flags or bad input
)

const usage = `usage: plan [-o json|table] < scenario.json
       plan --cluster NAMESPACE/NAME [--replicas N] [--pod-capacity C] [-o json|table]
            [--kubeconfig FILE] [--context NAME] [--timeout 30s]

Places targets on collector pods the way the operator does, and prints where
every target goes, each pod's load, the targets left unassigned and the
targets that move.

Without --cluster, the scenario is one JSON object on standard input:

  {"pods": 4, "podCapacity": 0,
   "targets": ["ns/r1", {"name": "ns/r2", "weight": 2}],
   "current": {"ns/r1": 0}}

  pods         number of pods, ordinals 0..pods-1 (required)
  podCapacity  load bound per pod in weight units; 0 or absent: automatic
  targets      names, or objects with a name and a weight (default 1)
  current      target name -> ordinal it is on now; an ordinal >= pods is a
               pod that is gone

With --cluster, plan reads that Cluster, its Pipelines, Targets and
Subscriptions with your kubeconfig (your RBAC applies) and prints, per pod,
its targets now (as the Targets' statuses record them) and after the change
(once every pod the Cluster then runs is ready), the moves against their
lower bound and the targets left unassigned. It prints names only, never
credentials, and reads no Secret.

Flags:
  -o, --output json|table  answer as JSON (default) or as a table for people
                           (--format is the same flag)
  --cluster NS/NAME        plan a live Cluster instead of a scenario
  --replicas N             with --cluster: the replicas to plan for
  --pod-capacity C         with --cluster: the podCapacity to plan for;
                           0 plans automatic capacity
  --kubeconfig FILE        with --cluster: the kubeconfig (default: $KUBECONFIG,
                           then ~/.kube/config)
  --context NAME           with --cluster: the kubeconfig context to use
  --timeout DURATION       with --cluster: how long reading may take (30s)
  -h, --help               print this help

Exit status: 0 on success, 2 on bad flags or bad input (one line on standard
error names the problem), 1 when reading or writing fails (with --cluster:
no kubeconfig, the Cluster not found, a read forbidden by RBAC).
`

// Main runs the plan subcommand with args (the arguments after "plan"),
// reading the scenario from stdin (or, with --cluster, a live Cluster) and
// writing the answer to stdout and any problem, as one line, to stderr. It
// returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		if _, err := io.WriteString(stdout, usage); err != nil {
			return fail(stderr, exitFailure, fmt.Errorf("write help: %w", err))
		}
		return exitOK
	}
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	if f.clusterFlag != "" {
		return runLive(f, stdout, stderr)
	}

	s, err := readScenario(stdin, maxInput)
	if err != nil {
		var readErr *readError
		if errors.As(err, &readErr) {
			return fail(stderr, exitFailure, err)
		}
		return fail(stderr, exitUsage, err)
	}
	in := s.input()
	if err := in.Validate(); err != nil {
		return fail(stderr, exitUsage, err)
	}

	answer := newAnswer(placement.Place(in), s.pods)
	if f.format == "table" {
		err = writeTable(stdout, answer, s.podCapacity == 0)
	} else {
		err = writeJSON(stdout, answer)
	}
	if err != nil {
		return fail(stderr, exitFailure, fmt.Errorf("write answer: %w", err))
	}
	return exitOK
}

// parseFlags reads the flags; clusterFlag is empty for a scenario on standard input.
func parseFlags(args []string) (liveFlags, error) {
	f := liveFlags{format: "json", timeout: 30 * time.Second}
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Main reports errors itself, on one line
	for _, name := range []string{"format", "o", "output"} {
		fs.StringVar(&f.format, name, "json", "json or table")
	}
	fs.StringVar(&f.clusterFlag, "cluster", "", "namespace/name of a live Cluster")
	fs.Func("replicas", "replicas to plan for", intFlag("--replicas", &f.overrides.replicas))
	fs.Func("pod-capacity", "podCapacity to plan for, 0 automatic", intFlag("--pod-capacity", &f.overrides.podCapacity))
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file")
	fs.StringVar(&f.context, "context", "", "kubeconfig context")
	fs.DurationVar(&f.timeout, "timeout", f.timeout, "how long reading may take")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q: the scenario is read from standard input, a live Cluster named with --cluster", fs.Arg(0))
	}
	if f.format != "json" && f.format != "table" {
		return f, fmt.Errorf("--output (-o, --format) must be json or table, got %q", f.format)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if f.clusterFlag == "" {
		for _, name := range []string{"replicas", "pod-capacity", "kubeconfig", "context", "timeout"} {
			if set[name] {
				return f, fmt.Errorf("--%s needs --cluster: a scenario on standard input says pods and podCapacity itself", name)
			}
		}
		return f, nil
	}
	namespace, name, ok := strings.Cut(f.clusterFlag, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return f, fmt.Errorf("--cluster must be NAMESPACE/NAME, got %q", f.clusterFlag)
	}
	if f.timeout <= 0 {
		return f, fmt.Errorf("--timeout must be above 0, got %s", f.timeout)
	}
	f.cluster = types.NamespacedName{Namespace: namespace, Name: name}
	return f, nil
}

// intFlag parses a flag's value as an integer from 0 up into *into.
func intFlag(name string, into **int32) func(string) error {
	return func(value string) error {
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("%s must be an integer from 0 up, got %q", name, value)
		}
		v := int32(n)
		*into = &v
		return nil
	}
}

// fail writes err as the one line on stderr and returns status.
func fail(stderr io.Writer, status int, err error) int {
	fmt.Fprintf(stderr, "plan: %s\n", oneLine(err.Error()))
	return status
}

// oneLine keeps a message on one line whatever it quotes.
var oneLine = strings.NewReplacer("\n", " ", "\r", " ").Replace
