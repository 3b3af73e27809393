package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gnmic-operator/gnmic-operator/internal/placement"
)

// maxPods bounds "pods": a plan scores every target against every pod, and
// no collector fleet comes near this size.
const maxPods = 10_000

// maxInput bounds the size of the scenario, so that a runaway pipe ends in a
// clear error instead of exhausting memory.
const maxInput = 256 << 20

// scenario is the decoded input document.
type scenario struct {
	pods        int
	podCapacity int
	targets     []placement.Target
	current     map[string]int
}

func (s scenario) input() placement.Input {
	pods := make([]int, s.pods)
	for i := range pods {
		pods[i] = i
	}
	return placement.Input{Pods: pods, PodCapacity: s.podCapacity, Targets: s.targets, Current: s.current}
}

// readError is a failure to read the input, as opposed to bad input.
type readError struct{ err error }

func (e *readError) Error() string { return "read input: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// errTooLarge tells that the input exceeds maxInput (or the smaller limit a
// test gives readScenario).
var errTooLarge = fmt.Errorf("input is larger than %d MiB", maxInput>>20)

// readScenario reads exactly one JSON object of at most limit bytes from r
// and decodes it strictly.
func readScenario(r io.Reader, limit int64) (scenario, error) {
	dec := json.NewDecoder(&limitedReader{r: r, limit: limit})
	var doc json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		return scenario{}, documentError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var readErr *readError
		if errors.As(err, &readErr) || errors.Is(err, errTooLarge) {
			return scenario{}, err
		}
		return scenario{}, errors.New("unexpected data after the JSON document: give exactly one object")
	}
	return decodeScenario(doc)
}

func documentError(err error) error {
	var syntax *json.SyntaxError
	var readErr *readError
	switch {
	case errors.As(err, &readErr), errors.Is(err, errTooLarge):
		return err
	case errors.Is(err, io.EOF):
		return errors.New("empty input: want one JSON object on standard input")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("malformed JSON: the document ends too early")
	case errors.As(err, &syntax):
		return fmt.Errorf("malformed JSON at byte %d: %w", syntax.Offset, err)
	default:
		return fmt.Errorf("malformed JSON: %w", err)
	}
}

// decodeScenario decodes the members of the top-level object.
func decodeScenario(doc json.RawMessage) (scenario, error) {
	var s scenario
	havePods := false
	err := decodeObject("input", doc, func(name string, value json.RawMessage) error {
		var err error
		switch name {
		case "pods":
			havePods = true
			s.pods, err = decodeInt("pods", value, 0, maxPods)
		case "podCapacity":
			s.podCapacity, err = decodeInt("podCapacity", value, 0, math.MaxInt)
		case "targets":
			s.targets, err = decodeTargets(value)
		case "current":
			s.current, err = decodeCurrent(value)
		default:
			err = fmt.Errorf("input: unknown member %q (want pods, podCapacity, targets, current)", name)
		}
		return err
	})
	if err != nil {
		return scenario{}, err
	}
	if !havePods {
		return scenario{}, errors.New("pods: missing: give the number of pods, 0 or more")
	}
	return s, nil
}

func decodeTargets(value json.RawMessage) ([]placement.Target, error) {
	var items []json.RawMessage
	if kind := kindOf(value); kind != "array" {
		return nil, fmt.Errorf("targets: must be an array, got %s", kind)
	}
	if err := json.Unmarshal(value, &items); err != nil {
		return nil, fmt.Errorf("targets: %w", err)
	}
	targets := make([]placement.Target, len(items))
	for i, item := range items {
		t, err := decodeTarget(fmt.Sprintf("targets[%d]", i), item)
		if err != nil {
			return nil, err
		}
		targets[i] = t
	}
	return targets, nil
}

// decodeTarget reads "name" or {"name": "name", "weight": 2}.
func decodeTarget(path string, value json.RawMessage) (placement.Target, error) {
	var t placement.Target
	switch kindOf(value) {
	case "string":
		name, err := decodeName(path, value)
		return placement.Target{Name: name}, err
	case "object":
		err := decodeObject(path, value, func(member string, v json.RawMessage) error {
			var err error
			switch member {
			case "name":
				t.Name, err = decodeName(path+".name", v)
			case "weight":
				t.Weight, err = decodeInt(path+".weight", v, 1, placement.MaxWeight)
			default:
				err = fmt.Errorf("%s: unknown member %q (want name, weight)", path, member)
			}
			return err
		})
		if err == nil && t.Name == "" {
			err = fmt.Errorf("%s: missing name", path)
		}
		return t, err
	default:
		return t, fmt.Errorf("%s: must be a target name or an object with a name and a weight, got %s", path, kindOf(value))
	}
}

func decodeName(path string, value json.RawMessage) (string, error) {
	if kind := kindOf(value); kind != "string" {
		return "", fmt.Errorf("%s: must be a string, got %s", path, kind)
	}
	var name string
	if err := json.Unmarshal(value, &name); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if name == "" {
		return "", fmt.Errorf("%s: must not be empty", path)
	}
	return name, nil
}

// decodeCurrent reads {"target name": ordinal, ...}.
func decodeCurrent(value json.RawMessage) (map[string]int, error) {
	current := map[string]int{}
	err := decodeObject("current", value, func(name string, v json.RawMessage) error {
		ordinal, err := decodeInt(fmt.Sprintf("current[%q]", name), v, 0, math.MaxInt)
		current[name] = ordinal
		return err
	})
	return current, err
}
