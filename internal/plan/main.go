package plan

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gnmic-operator/gnmic-operator/internal/placement"
)

// Exit statuses of Main.
const (
	exitOK      = 0
	exitFailure = 1 // reading the input or writing the answer failed
	exitUsage   = 2 // bad flags or bad input
)

const usage = `usage: plan [--format json|table] < scenario.json

Places targets on collector pods the way the operator does, and prints where
every target goes, each pod's load, the targets left unassigned and the
targets that move. The scenario is one JSON object on standard input:

  {"pods": 4, "podCapacity": 0,
   "targets": ["ns/r1", {"name": "ns/r2", "weight": 2}],
   "current": {"ns/r1": 0}}

  pods         number of pods, ordinals 0..pods-1 (required)
  podCapacity  load bound per pod in weight units; 0 or absent: automatic
  targets      names, or objects with a name and a weight (default 1)
  current      target name -> ordinal it is on now; an ordinal >= pods is a
               pod that is gone

Flags:
  --format json|table   answer as JSON (default) or as a table for people
  -h, --help            print this help

Exit status: 0 on success, 2 on bad flags or bad input (one line on standard
error names the problem), 1 when reading or writing fails.
`

// Main runs the plan subcommand with args (the arguments after "plan"),
// reading the scenario from stdin and writing the answer to stdout and any
// problem, as one line, to stderr. It returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	format, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		if _, err := io.WriteString(stdout, usage); err != nil {
			return fail(stderr, exitFailure, fmt.Errorf("write help: %w", err))
		}
		return exitOK
	}
	if err != nil {
		return fail(stderr, exitUsage, err)
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
	if format == "table" {
		err = writeTable(stdout, answer, s.podCapacity == 0)
	} else {
		err = writeJSON(stdout, answer)
	}
	if err != nil {
		return fail(stderr, exitFailure, fmt.Errorf("write answer: %w", err))
	}
	return exitOK
}

// parseFlags returns the output format.
func parseFlags(args []string) (string, error) {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Main reports errors itself, on one line
	format := fs.String("format", "json", "json or table")
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("unexpected argument %q: the scenario is read from standard input", fs.Arg(0))
	}
	if *format != "json" && *format != "table" {
		return "", fmt.Errorf("--format must be json or table, got %q", *format)
	}
	return *format, nil
}

// fail writes err as the one line on stderr and returns status.
func fail(stderr io.Writer, status int, err error) int {
	fmt.Fprintf(stderr, "plan: %s\n", oneLine(err.Error()))
	return status
}

// oneLine keeps a message on one line whatever it quotes.
var oneLine = strings.NewReplacer("\n", " ", "\r", " ").Replace
