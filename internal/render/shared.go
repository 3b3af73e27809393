package render

import (
	"fmt"
	"reflect"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// Shared is what every target of a selection is rendered against: the selection's outputs and inputs that
// render, the processors they apply and its subscriptions, each rendered once. It lets a caller render the
// targets one at a time, keep their results, and assemble the fleet's configuration from them: Assemble of
// every selected target's Target result is what PodConfig gives for all of them.
type Shared struct {
	b *builder
	// own are how many of b's skips are the outputs', inputs' and processors' (Target calls add the
	// subscriptions' after them).
	own int
}

// NewShared renders the outputs and inputs of sel.
func NewShared(sel selection.Selection, conn Connections) *Shared {
	b := newBuilder(sel, conn)
	return &Shared{b: b, own: len(b.skips)}
}

// TargetResult is one selected target rendered against a Shared.
type TargetResult struct {
	// Config is the target's configuration in its Normalize form; Err why it cannot be configured.
	Config gnmic.TargetConfig
	Err    error
	// Consulted are the subscriptions the rendering looked at: all of the target's, or those up to the first
	// that does not render.
	Consulted []string
}

// Target renders st. Its result depends only on st (its Target's name and spec, its subscriptions, outputs
// and labels), on its profile and the Secrets that profile names (from the Connections), and on what Equal
// compares.
func (s *Shared) Target(st selection.SelectedTarget) TargetResult {
	tc, _, consulted, err := s.b.renderSelected(st)
	if err != nil {
		return TargetResult{Err: err, Consulted: consulted}
	}
	n := gnmic.Config{Targets: map[string]gnmic.TargetConfig{st.Target.Name: tc}}.Normalize()
	return TargetResult{Config: n.Targets[st.Target.Name], Consulted: consulted}
}

// Equal tells whether every target renders against s as it does against o: their outputs, processors and
// subscriptions are the same.
func (s *Shared) Equal(o *Shared) bool {
	if o == nil {
		return false
	}
	if !reflect.DeepEqual(s.b.cfg.Outputs, o.b.cfg.Outputs) || !reflect.DeepEqual(s.b.cfg.Processors, o.b.cfg.Processors) ||
		len(s.b.sel.Subscriptions) != len(o.b.sel.Subscriptions) {
		return false
	}
	for name := range s.b.sel.Subscriptions {
		if _, ok := o.b.sel.Subscriptions[name]; !ok {
			return false
		}
		a, b := s.b.subscription(name), o.b.subscription(name)
		if !reflect.DeepEqual(a.config, b.config) || errorText(a.err) != errorText(b.err) {
			return false
		}
	}
	return true
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Assemble is the fleet's configuration from its targets' results, as PodConfig renders it for every selected
// target: targets are the configurations of those that render (Normalize form, as Target gives them) and
// subscriptions the names of the subscriptions they use; failed the SkipErrors of those that do not, and
// consulted the subscriptions any target consulted. The configuration holds targets itself (not a copy).
func (s *Shared) Assemble(targets map[string]gnmic.TargetConfig, subscriptions []string, failed []SkipError,
	consulted func(subscription string) bool) (gnmic.Config, []SkipError, error) {
	b := s.b
	skips := append([]SkipError(nil), b.skips[:s.own]...)
	for _, name := range sortedKeys(b.sel.Subscriptions) {
		if r := b.subscription(name); r.err != nil && consulted(name) {
			skips = append(skips, SkipError{Kind: selection.KindSubscription, Name: name, Err: r.err})
		}
	}
	skips = append(skips, failed...)
	sortSkips(skips)
	rest := gnmic.Config{Outputs: b.cfg.Outputs, Inputs: b.cfg.Inputs, Processors: b.cfg.Processors}
	for _, name := range subscriptions {
		rest.Subscriptions = setKey(rest.Subscriptions, name, b.subscription(name).config)
	}
	cfg := rest.Normalize()
	// Each target was checked with the outputs, processors and subscriptions it uses, which are all here:
	// what is left to check is the rest.
	if err := cfg.Validate(); err != nil {
		return gnmic.Config{}, skips, fmt.Errorf("render pod config: %w", err)
	}
	if len(targets) > 0 {
		cfg.Targets = targets
	}
	return cfg, skips, nil
}
