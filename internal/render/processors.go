package render

import (
	"fmt"

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
	rendered := map[string]map[string]any{}
	var walk func(names []string, via string) error
	walk = func(names []string, via string) error {
		for _, name := range names {
			if _, done := rendered[name]; done {
				continue
			}
			if _, done := b.cfg.Processors[name]; done {
				continue
			}
			p := b.sel.Processors[name]
			if p == nil {
				if via != "" {
					return fmt.Errorf("processor %q (run by event-combine processor %q): %w", name, via, ErrProcessorNotFound)
				}
				return fmt.Errorf("processor %q: %w", name, ErrProcessorNotFound)
			}
			obj, err := processorObject(p)
			if err != nil {
				return fmt.Errorf("processor %q: %w", name, err)
			}
			rendered[name] = obj
			if err := walk(selection.CombinedProcessors(p), name); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(chain, ""); err != nil {
		return err
	}
	for name, obj := range rendered {
		b.cfg.Processors = setKey(b.cfg.Processors, name, obj)
	}
	return nil
}
