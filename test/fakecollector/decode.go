package fakecollector

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Object kinds of the apply body, in the order gNMIc deletes them.
const (
	kindSubscriptions       = "subscriptions"
	kindTargets             = "targets"
	kindInputs              = "inputs"
	kindOutputs             = "outputs"
	kindProcessors          = "processors"
	kindTunnelTargetMatches = "tunnel-target-matches"
)

var (
	deleteOrder = []string{kindSubscriptions, kindTargets, kindInputs, kindOutputs, kindProcessors, kindTunnelTargetMatches}
	setOrder    = []string{kindSubscriptions, kindProcessors, kindOutputs, kindTargets, kindInputs, kindTunnelTargetMatches}
)

// applyRequest is a decoded apply body: per kind, per name, the object as
// sent (raw) and as gNMIc stores it (typed: known keys only, durations in
// nanoseconds).
type applyRequest struct {
	raw   map[string]map[string]map[string]any
	typed map[string]map[string]map[string]any
}

// decodeApplyRequest decodes a body the way gNMIc does: one JSON value into a
// map, then each kind into its Go type, where a wrong type is an error and an
// unknown key is ignored.
func decodeApplyRequest(r io.Reader) (*applyRequest, error) {
	var body map[string]any
	if err := json.NewDecoder(r).Decode(&body); err != nil {
		return nil, err
	}
	req := &applyRequest{
		raw:   make(map[string]map[string]map[string]any),
		typed: make(map[string]map[string]map[string]any),
	}
	for _, kind := range deleteOrder {
		if err := req.decodeKind(kind, body[kind]); err != nil {
			return nil, err
		}
	}
	return req, nil
}

func (req *applyRequest) decodeKind(kind string, value any) error {
	if value == nil {
		return nil
	}
	objects, ok := value.(map[string]any)
	if !ok {
		return fmt.Errorf("'%s': expected a map, got '%s'", kind, jsonType(value))
	}
	req.raw[kind] = make(map[string]map[string]any, len(objects))
	req.typed[kind] = make(map[string]map[string]any, len(objects))
	for _, name := range sortedKeys(objects) {
		path := fmt.Sprintf("%s[%s]", kind, name)
		obj, ok := objects[name].(map[string]any)
		if !ok {
			return fmt.Errorf("'%s': expected a map, got '%s'", path, jsonType(objects[name]))
		}
		decode := schemas[kind].decode
		if kind == kindTunnelTargetMatches {
			decode = decodeTunnelTargetMatch
		}
		typed, err := decode(path, obj)
		if err != nil {
			return err
		}
		req.raw[kind][name] = obj
		req.typed[kind][name] = typed
	}
	return nil
}

// validate applies the apply validations of gNMIc release r; an empty body is a valid reset.
func (req *applyRequest) validate(r release) error {
	if r.applyNeedsTargetsOrInputs() {
		return req.validateV043()
	}
	switch {
	case len(req.typed[kindTargets]) > 0 && len(req.typed[kindSubscriptions]) == 0:
		return errors.New("if targets are provided, at least one subscription is required")
	case len(req.typed[kindTunnelTargetMatches]) > 0 && len(req.typed[kindSubscriptions]) == 0:
		return errors.New("if tunnel-target-matches are provided, at least one subscription is required")
	case len(req.typed[kindInputs]) > 0 && len(req.typed[kindOutputs]) == 0:
		return errors.New("if inputs are provided, at least one output is required")
	}
	return nil
}

// validateV043 is validateApplyRequest of v0.43.0 and v0.44.0 (release.go, applyNeedsTargetsOrInputs).
func (req *applyRequest) validateV043() error {
	n := func(kind string) int { return len(req.typed[kind]) }
	switch {
	case n(kindTargets) == 0 && n(kindSubscriptions) == 0 && n(kindOutputs) == 0 && n(kindInputs) == 0 &&
		n(kindProcessors) == 0:
		return nil // a reset, even with tunnel-target-matches
	case n(kindTargets) == 0 && n(kindInputs) == 0:
		return errors.New("at least one of targets or inputs is required")
	case n(kindTargets) > 0 && n(kindSubscriptions) == 0:
		return errors.New("if targets are provided, at least one subscription is required")
	case n(kindInputs) > 0 && n(kindOutputs) == 0:
		return errors.New("if inputs are provided, at least one output is required")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// deepCopy copies decoded JSON values.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		cp := make(map[string]any, len(v))
		for k, e := range v {
			cp[k] = deepCopy(e)
		}
		return cp
	case []any:
		cp := make([]any, len(v))
		for i, e := range v {
			cp[i] = deepCopy(e)
		}
		return cp
	case []string:
		return append([]string(nil), v...)
	case map[string]string:
		cp := make(map[string]string, len(v))
		for k, e := range v {
			cp[k] = e
		}
		return cp
	}
	return v
}
