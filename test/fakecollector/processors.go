package fakecollector

import (
	"fmt"
	"slices"
)

// What gNMIc does with event processors (github.com/openconfig/gnmic at the commit of
// /work/shared/gnmic-api.md: pkg/collector/api/server/apply.go, pkg/formatters/processors.go, the outputs and
// inputs managers):
//   - the apply decodes "processors" into map[string]map[string]any: a processor that is not a JSON object is
//     refused with 400 like any other kind; its inside is not looked at, so an unknown type is stored (200);
//   - processors are stored as sent, {type: config}, without a name (the fake stores them so, too);
//   - an output or input reads its "event-processors" (names, in order) when it is initialised, from the
//     stored processors; a name not stored, or a processor whose type is not a registered one, fails that
//     output or input (its state failed with the reason, nothing reaches it) while the apply was answered
//     200; the fake fails it so too (components.go). The type is the first key a Go map yields, so a
//     processor with more than one key fails at random; the fake counts it as failing always. Processors are
//     set before outputs and inputs in one apply, so an apply that brings both starts them; a processor
//     created later does not restart an output that failed for lack of it (gNMIc watches only processor
//     updates), a change to the output does;
//   - a change to a stored processor updates the outputs and inputs that use it in place: no target is
//     stopped, started or reconnected;
//   - only POST /api/v1/config/outputs and /inputs (which the operator does not use) check that the named
//     processors exist; the apply does not.

// ProcessorTypes are the event processor types gNMIc registers (pkg/formatters/all, EventProcessorTypes).
var ProcessorTypes = []string{
	"event-add-tag", "event-allow", "event-combine", "event-convert", "event-data-convert", "event-date-string",
	"event-delete", "event-drop", "event-duration-convert", "event-extract-tags", "event-group-by",
	"event-ieeefloat32", "event-jq", "event-merge", "event-override-ts", "event-rate-limit", "event-starlark",
	"event-strings", "event-time-epoch", "event-to-tag", "event-trigger", "event-value-tag",
	"event-value-tag-v2", "event-write",
}

// EventProcessors returns, in order, the event-processors the applied output (kind "outputs") or input
// ("inputs") called name lists; nil when it lists none or is not in the snapshot.
func (s Snapshot) EventProcessors(kind, name string) []string {
	var obj map[string]any
	switch kind {
	case kindOutputs:
		obj = s.Outputs[name]
	case kindInputs:
		obj = s.Inputs[name]
	}
	return eventProcessorsOf(obj)
}

// eventProcessorsOf is the event-processors list of an output's or input's object, in order.
func eventProcessorsOf(obj map[string]any) []string {
	items, _ := obj["event-processors"].([]any)
	var names []string
	for _, item := range items {
		if n, ok := item.(string); ok {
			names = append(names, n)
		}
	}
	return names
}

// ProcessorType is the type of the applied processor called name: its only key; "" when it is not in the
// snapshot or has not exactly one key.
func (s Snapshot) ProcessorType(name string) string {
	return processorType(s.Processors[name])
}

func processorType(p map[string]any) string {
	if len(p) != 1 {
		return ""
	}
	for k := range p {
		return k
	}
	return ""
}

// InitError is the error gNMIc's initialisation of the applied output (kind "outputs") or input ("inputs")
// called name fails with because of its event-processors, in gNMIc's words; nil when they all initialise.
// An event-combine processor's own processors are looked up the same way.
func (s Snapshot) InitError(kind, name string) error {
	return processorsError(s.EventProcessors(kind, name), s.Processors, map[string]bool{})
}

// processorsError is the error gNMIc's MakeEventProcessors fails with for names among processors.
func processorsError(names []string, processors map[string]map[string]any, seen map[string]bool) error {
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		p, ok := processors[name]
		if !ok {
			return fmt.Errorf("%q event processor not found", name)
		}
		typ := processorType(p)
		if typ == "" || !slices.Contains(ProcessorTypes, typ) {
			for k := range p {
				if !slices.Contains(ProcessorTypes, k) {
					typ = k
					break
				}
			}
			return fmt.Errorf("%q event processor has an unknown type=%q", name, typ)
		}
		if typ == "event-combine" {
			if err := processorsError(combined(p[typ]), processors, seen); err != nil {
				return fmt.Errorf("failed initializing event processor '%s' of type='%s': %w", name, typ, err)
			}
		}
	}
	return nil
}

// combined are the names of the processors an event-combine's settings run.
func combined(settings any) []string {
	m, _ := settings.(map[string]any)
	steps, _ := m["processors"].([]any)
	var names []string
	for _, step := range steps {
		if s, ok := step.(map[string]any); ok {
			if n, ok := s["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}
