package render

import (
	"fmt"
	"strings"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// eventProcessorsKey is the key of an output's or input's configuration that lists, in order, the processors
// it applies.
const eventProcessorsKey = "event-processors"

// processorObject is the collector's view of p: {type: config}. The collector takes a processor's type from
// its only key (the first a Go map yields, github.com/openconfig/gnmic pkg/formatters MakeProcessor), so
// nothing else may be in the object, not even its name.
func processorObject(p *v1alpha1.Processor) (map[string]any, error) {
	settings, err := configObject(p.Spec.Config)
	if err != nil {
		return nil, err
	}
	return map[string]any{p.Spec.Type: settings}, nil
}

// CheckProcessor reports, wrapping ErrInvalidProcessor, a config the collector fails on when an output or
// input applying p is initialised (github.com/openconfig/gnmic, pkg/formatters): an event-* key at its top (the
// configuration file's {event-strings: {...}} form written under config, which the type's decoder ignores or
// refuses), an event-starlark without exactly one of script and source, an event-combine without processors.
// The API server cannot check these: its validation rules cannot read a schemaless object.
func CheckProcessor(p *v1alpha1.Processor) error {
	for _, key := range sortedKeys(p.Spec.Config) {
		if strings.HasPrefix(key, "event-") {
			return fmt.Errorf("spec.config.%s: config holds the %s settings themselves, not a processor type: %w", key, p.Spec.Type, ErrInvalidProcessor)
		}
	}
	_, script := p.Spec.Config["script"]
	_, source := p.Spec.Config["source"]
	switch {
	case p.Spec.Type == "event-starlark" && script == source:
		return fmt.Errorf("an event-starlark processor needs exactly one of spec.config.script and spec.config.source: %w", ErrInvalidProcessor)
	case p.Spec.Type == "event-combine" && len(selection.CombinedProcessors(p)) == 0:
		return fmt.Errorf("an event-combine processor needs spec.config.processors, each with a name: %w", ErrInvalidProcessor)
	}
	return nil
}

// setProcessorChain sets obj's event-processors to chain, and removes any when chain is empty, so that
// config never names a processor the operator did not resolve.
func setProcessorChain(obj map[string]any, chain []string) {
	if len(chain) == 0 {
		delete(obj, eventProcessorsKey)
		return
	}
	obj[eventProcessorsKey] = append([]string(nil), chain...)
}

// addProcessorChain renders the processors of chain, and those an event-combine among them runs, into the
// pod's configuration, each once. It fails, adding nothing, when one does not exist or does not render: the
// object whose chain it is must then be left out.
func (b *builder) addProcessorChain(chain []string) error {
	used, err := ProcessorsOf(chain, b.sel.Processors)
	if err != nil {
		return err
	}
	rendered := make(map[string]map[string]any, len(used))
	for _, name := range used {
		if _, done := b.cfg.Processors[name]; done {
			continue
		}
		obj, err := processorObject(b.sel.Processors[name])
		if err != nil {
			return fmt.Errorf("processor %q: %w", name, err)
		}
		rendered[name] = obj
	}
	for name, obj := range rendered {
		b.cfg.Processors = setKey(b.cfg.Processors, name, obj)
	}
	return nil
}

// ProcessorsOf returns the names of the processors a chain runs: its own, and those an event-combine among
// them runs, each once, in the order they are met. It fails with ErrProcessorNotFound, naming it, when one is
// not in processors, and with ErrInvalidProcessor when one's config is one the collector fails on
// (CheckProcessor).
func ProcessorsOf(chain []string, processors map[string]*v1alpha1.Processor) ([]string, error) {
	var used []string
	seen := map[string]bool{}
	var walk func(names []string, via string) error
	walk = func(names []string, via string) error {
		for _, name := range names {
			if seen[name] {
				continue
			}
			p := processors[name]
			if p == nil {
				if via != "" {
					return fmt.Errorf("processor %q (run by event-combine processor %q): %w", name, via, ErrProcessorNotFound)
				}
				return fmt.Errorf("processor %q: %w", name, ErrProcessorNotFound)
			}
			if err := CheckProcessor(p); err != nil {
				return fmt.Errorf("processor %q: %w", name, err)
			}
			seen[name] = true
			used = append(used, name)
			if err := walk(selection.CombinedProcessors(p), name); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(chain, ""); err != nil {
		return nil, err
	}
	return used, nil
}
