package balance

import "fmt"

// InputError is the error Balance and Validate return: where the problem is,
// in the input's own terms, and what it is.
type InputError struct {
	// Field locates the problem, for example `targets[2]` or `order[0]`.
	Field string
	// Problem says what is wrong, for example `duplicate target name "zone-a"`.
	Problem string
}

func (e *InputError) Error() string {
	return e.Field + ": " + e.Problem
}

// Validate reports the first problem in the input as an *InputError, or nil.
// Problems are looked for in a fixed order (replicas, policy, startupTimeout,
// targets in input order, then the order under the priority policy or the
// proportions under the proportional one), so the answer is deterministic.
func (in Input) Validate() error {
	if !isCount(in.Replicas) {
		return invalid("replicas", "replicas must be from 0 to %d, got %d", MaxReplicas, in.Replicas)
	}
	if in.Policy != Priority && in.Policy != Proportional {
		return invalid("policy", "must be %q or %q, got %q", Priority, Proportional, in.Policy)
	}
	if in.StartupTimeout < 0 {
		return invalid("startupTimeout", "must not be negative, got %s", in.StartupTimeout)
	}
	names := make(map[string]struct{}, len(in.Targets))
	for i, t := range in.Targets {
		if problem := targetProblem(t, names); problem != "" {
			return invalid(fmt.Sprintf("targets[%d]", i), "%s", problem)
		}
		names[t.Name] = struct{}{}
	}
	if in.Policy == Priority {
		return validateOrder(in.Order, names)
	}
	return validateProportions(in.Targets)
}

// targetProblem says what is wrong with t, or "".
func targetProblem(t Target, seen map[string]struct{}) string {
	if t.Name == "" {
		return "name must not be empty"
	}
	if _, dup := seen[t.Name]; dup {
		return fmt.Sprintf("duplicate target name %q", t.Name)
	}
	counts := [...]struct {
		what  string
		value int
	}{{"min", t.Min}, {"max", ptrOr(t.Max, 0)}, {"proportion", t.Proportion}, {"started", t.Started}, {"notStarted", t.NotStarted}}
	for _, c := range counts {
		if !isCount(c.value) {
			return fmt.Sprintf("%s of %q must be from 0 to %d, got %d", c.what, t.Name, MaxReplicas, c.value)
		}
	}
	if t.Max != nil && t.Min > *t.Max {
		return fmt.Sprintf("min of %q (%d) is above its max (%d)", t.Name, t.Min, *t.Max)
	}
	if t.Waiting < 0 {
		return fmt.Sprintf("waiting of %q must not be negative, got %s", t.Name, t.Waiting)
	}
	return ""
}

func ptrOr(p *int, otherwise int) int {
	if p == nil {
		return otherwise
	}
	return *p
}

// validateOrder accepts an order that leaves targets out (they get their
// minimum) but not one that names a target twice or one that does not exist.
func validateOrder(order []string, targets map[string]struct{}) error {
	listed := make(map[string]struct{}, len(order))
	for i, name := range order {
		field := fmt.Sprintf("order[%d]", i)
		if _, ok := targets[name]; !ok {
			return invalid(field, "unknown target %q", name)
		}
		if _, dup := listed[name]; dup {
			return invalid(field, "target %q listed twice", name)
		}
		listed[name] = struct{}{}
	}
	return nil
}

// validateProportions asks for one positive proportion when there are
// targets: with none, the policy could give no target more than its minimum.
func validateProportions(targets []Target) error {
	if len(targets) == 0 {
		return nil
	}
	for _, t := range targets {
		if t.Proportion > 0 {
			return nil
		}
	}
	return invalid("targets", "the proportional policy needs a positive proportion on at least one target")
}

func isCount(n int) bool {
	return n >= 0 && n <= MaxReplicas
}

func invalid(field, format string, args ...any) error {
	return &InputError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
