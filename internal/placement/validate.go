package placement

import "fmt"

// InputError is the error Validate returns: where the problem is, in the
// input's own terms, and what it is.
type InputError struct {
	// Field locates the problem, for example `targets[3]` or `current["ns/r1"]`.
	Field string
	// Problem says what is wrong, for example `duplicate target name "ns/r1"`.
	Problem string
}

func (e *InputError) Error() string {
	return e.Field + ": " + e.Problem
}

// Validate reports the first problem in the input as an *InputError, or nil.
// Problems are looked for in a fixed order (pods, podCapacity, fill, targets in
// input order, then current and last by name), so the answer is deterministic.
//
// Place accepts input that Validate rejects (see Place); a caller that wants
// to tell its user about bad input calls Validate first.
func (in Input) Validate() error {
	if err := validatePods(in.Pods); err != nil {
		return err
	}
	if in.PodCapacity < 0 {
		return invalid("podCapacity", "must not be negative, got %d", in.PodCapacity)
	}
	if in.Fill != FillByName && in.Fill != FillByWeight {
		return invalid("fill", "must be ByName (%d) or ByWeight (%d), got %d", FillByName, FillByWeight, in.Fill)
	}
	if err := validateTargets(in.Targets); err != nil {
		return err
	}
	if err := validateOrdinals("current", in.Current); err != nil {
		return err
	}
	return validateOrdinals("last", in.Last)
}

func validatePods(pods []int) error {
	seen := make(map[int]struct{}, len(pods))
	for i, ordinal := range pods {
		if ordinal < 0 {
			return invalid(fmt.Sprintf("pods[%d]", i), "ordinal must not be negative, got %d", ordinal)
		}
		if _, dup := seen[ordinal]; dup {
			return invalid(fmt.Sprintf("pods[%d]", i), "duplicate pod ordinal %d", ordinal)
		}
		seen[ordinal] = struct{}{}
	}
	return nil
}

func validateTargets(targets []Target) error {
	seen := make(map[string]struct{}, len(targets))
	for i, t := range targets {
		if t.Name == "" {
			return invalid(fmt.Sprintf("targets[%d]", i), "name must not be empty")
		}
		if t.Weight < 0 || t.Weight > MaxWeight {
			return invalid(fmt.Sprintf("targets[%d]", i), "weight of %q must be from 1 to %d (0 means 1), got %d", t.Name, MaxWeight, t.Weight)
		}
		if _, dup := seen[t.Name]; dup {
			return invalid(fmt.Sprintf("targets[%d]", i), "duplicate target name %q", t.Name)
		}
		seen[t.Name] = struct{}{}
	}
	return nil
}

// validateOrdinals reports the alphabetically first negative ordinal of
// current or last, so that the answer does not depend on map iteration order.
func validateOrdinals(field string, current map[string]int) error {
	first, found := "", false
	for name, ordinal := range current {
		if ordinal < 0 && (!found || name < first) {
			first, found = name, true
		}
	}
	if found {
		return invalid(fmt.Sprintf("%s[%q]", field, first), "ordinal must not be negative, got %d", current[first])
	}
	return nil
}

func invalid(field, format string, args ...any) error {
	return &InputError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
