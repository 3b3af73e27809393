package render

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// PodConfig returns the configuration of the collector pod that holds the
// targets named onPod, in its Normalize form, and the objects it had to leave
// out, sorted by kind and name. The pod gets:
//   - every selected output, so that where a target's data goes does not
//     depend on the pod it is placed on, except an output whose listening
//     port is taken (by an older output, or Connections.ReservedPorts);
//   - every selected input that feeds at least one output;
//   - the processors those outputs and inputs apply (their chains, in order, as event-processors), and no
//     other;
//   - each target of onPod whose profile, Secrets, subscriptions and outputs
//     all render;
//   - the subscriptions those targets use, and no other.
//
// A skipped output or subscription skips the targets and inputs that use it; an output or input whose
// chain names a Processor that does not exist is skipped, so that none runs with part of its chain.
// The error is not nil only if the assembled configuration fails
// gnmic.Config.Validate, which the per-object checks rule out; the caller
// should then push nothing. Equal inputs give equal configs and equal Hash.
func PodConfig(sel selection.Selection, onPod []string, conn Connections) (gnmic.Config, []SkipError, error) {
	b := newBuilder(sel, conn)
	names := slices.Clone(onPod)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		b.addTarget(name)
	}
	sortSkips(b.skips)
	cfg := b.cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return gnmic.Config{}, b.skips, fmt.Errorf("render pod config: %w", err)
	}
	return cfg, b.skips, nil
}

// newBuilder is a builder with every output and input of sel that renders added.
func newBuilder(sel selection.Selection, conn Connections) *builder {
	b := &builder{sel: sel, conn: conn, subscriptions: map[string]subscriptionResult{}, reported: map[string]bool{}}
	b.addOutputs()
	b.addInputs()
	return b
}

// sortSkips orders skips by kind and name; each object is skipped at most once, so the order is total.
func sortSkips(skips []SkipError) {
	slices.SortStableFunc(skips, func(a, b SkipError) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
}

// builder assembles one pod's Config.
type builder struct {
	sel           selection.Selection
	conn          Connections
	cfg           gnmic.Config
	subscriptions map[string]subscriptionResult // rendered on first use
	// reported are the subscriptions whose failure was added to skips: a subscription is reported by the
	// first target that uses it.
	reported map[string]bool
	skips    []SkipError
}

type subscriptionResult struct {
	config gnmic.SubscriptionConfig
	err    error
}

func (b *builder) skip(kind selection.Kind, name string, err error) {
	b.skips = append(b.skips, SkipError{Kind: kind, Name: name, Err: err})
}

// addOutputs adds every output that renders. Of outputs that listen on one port (or on one of
// Connections.ReservedPorts), the oldest keeps it and the others are skipped with a PortTakenError.
func (b *builder) addOutputs() {
	listening := map[int32]PortTakenError{}
	for port, what := range b.conn.ReservedPorts {
		listening[port] = PortTakenError{Port: port, By: what}
	}
	for _, name := range outputsByAge(b.sel.Outputs) {
		obj, err := outputObject(b.sel.Outputs[name], b.conn.Secrets)
		if err == nil {
			chain := b.sel.OutputProcessors[name]
			setProcessorChain(obj, chain)
			err = b.addProcessorChain(chain)
		}
		if err != nil {
			b.skip(selection.KindOutput, name, err)
			continue
		}
		if port, listens := gnmic.OutputListenPort(obj); listens {
			if holder, taken := listening[port]; taken {
				b.skip(selection.KindOutput, name, holder)
				continue
			}
			listening[port] = PortTakenError{Port: port, By: fmt.Sprintf("output %q", name), Output: name}
		}
		b.cfg.Outputs = setKey(b.cfg.Outputs, name, obj)
	}
}

func (b *builder) addInputs() {
	for _, name := range sortedKeys(b.sel.Inputs) {
		in := b.sel.Inputs[name]
		if len(in.Outputs) == 0 {
			b.skip(selection.KindInput, name, ErrNoOutputs)
			continue
		}
		if err := b.outputsRendered(in.Outputs); err != nil {
			b.skip(selection.KindInput, name, err)
			continue
		}
		obj, err := inputObject(in.Input, in.Outputs, b.conn.Secrets)
		if err == nil {
			setProcessorChain(obj, in.Processors)
			err = b.addProcessorChain(in.Processors)
		}
		if err != nil {
			b.skip(selection.KindInput, name, err)
			continue
		}
		b.cfg.Inputs = setKey(b.cfg.Inputs, name, obj)
	}
}

func (b *builder) addTarget(name string) {
	st, ok := b.sel.Target(name)
	if !ok {
		b.skip(selection.KindTarget, name, ErrNotSelected)
		return
	}
	tc, subs, _, err := b.renderSelected(st)
	if err != nil {
		b.skip(selection.KindTarget, name, err)
		return
	}
	b.cfg.Targets = setKey(b.cfg.Targets, name, tc)
	for sub, sc := range subs {
		b.cfg.Subscriptions = setKey(b.cfg.Subscriptions, sub, sc)
	}
}

// renderSelected renders a selected target and checks it against the outputs, processors and subscriptions
// it uses, as the collector would: its configuration, its subscriptions' and the subscriptions it consulted
// (each failing one is reported once, by the first target that consults it; a target stops at the first
// that fails).
func (b *builder) renderSelected(st selection.SelectedTarget) (gnmic.TargetConfig, map[string]gnmic.SubscriptionConfig, []string, error) {
	tc, err := renderTarget(st, b.conn)
	if err != nil {
		return gnmic.TargetConfig{}, nil, nil, err
	}
	subs, consulted, err := b.subscriptionsOf(st.Subscriptions)
	if err == nil {
		err = b.outputsRendered(st.Outputs)
	}
	if err == nil {
		if verr := targetAlone(tc, subs, b.cfg.Outputs, b.cfg.Processors).Validate(); verr != nil {
			err = fmt.Errorf("the collector would reject it: %w", verr)
		}
	}
	if err != nil {
		return gnmic.TargetConfig{}, nil, consulted, err
	}
	return tc, subs, consulted, nil
}

// subscriptionsOf renders the named subscriptions, each once per pod; a
// subscription that does not render is reported once and fails every target
// that uses it.
func (b *builder) subscriptionsOf(names []string) (map[string]gnmic.SubscriptionConfig, []string, error) {
	out := make(map[string]gnmic.SubscriptionConfig, len(names))
	for i, name := range names {
		r := b.subscription(name)
		if r.err != nil {
			b.reportSubscription(name, r.err)
			return nil, names[:i+1], fmt.Errorf("subscription %q: %w", name, ErrDependencySkipped)
		}
		out[name] = r.config
	}
	return out, names, nil
}

// subscription is the named subscription rendered, once per builder.
func (b *builder) subscription(name string) subscriptionResult {
	r, seen := b.subscriptions[name]
	if !seen {
		r = b.renderSubscription(name)
		b.subscriptions[name] = r
	}
	return r
}

// reportSubscription skips a subscription that does not render, once.
func (b *builder) reportSubscription(name string, err error) {
	if !b.reported[name] {
		b.reported[name] = true
		b.skip(selection.KindSubscription, name, err)
	}
}

func (b *builder) renderSubscription(name string) subscriptionResult {
	s := b.sel.Subscriptions[name]
	if s == nil {
		return subscriptionResult{err: ErrNotSelected}
	}
	sc, err := renderSubscription(s)
	if err == nil {
		err = gnmic.Config{Subscriptions: map[string]gnmic.SubscriptionConfig{name: sc}}.Validate()
	}
	return subscriptionResult{config: sc, err: err}
}

// outputsRendered fails when one of names is not among the pod's outputs.
func (b *builder) outputsRendered(names []string) error {
	for _, name := range names {
		if _, ok := b.cfg.Outputs[name]; !ok {
			return fmt.Errorf("output %q: %w", name, ErrDependencySkipped)
		}
	}
	return nil
}

// targetAlone is the smallest Config holding t, for validating t on its own: with the outputs it sends to
// and the pod's processors, which those outputs may apply.
func targetAlone(t gnmic.TargetConfig, subs map[string]gnmic.SubscriptionConfig, outputs, processors map[string]map[string]any) gnmic.Config {
	c := gnmic.Config{Targets: map[string]gnmic.TargetConfig{t.Name: t}, Subscriptions: subs, Processors: processors}
	for _, name := range t.Outputs {
		c.Outputs = setKey(c.Outputs, name, outputs[name])
	}
	return c
}

func setKey[V any](m map[string]V, key string, v V) map[string]V {
	if m == nil {
		m = make(map[string]V)
	}
	m[key] = v
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Subset is the configuration of a pod that holds the named targets, cut from the configuration of every
// target (as PodConfig renders it for all of them): those targets, the subscriptions they run, and every
// output, input, processor and tunnel-target-match (with the subscriptions the matches run). Names full does not hold are left out. Rendering the fleet once and cutting
// each pod's part from it costs one render per target instead of one per target and pod.
func Subset(full gnmic.Config, names []string) gnmic.Config {
	out := gnmic.Config{Outputs: full.Outputs, Inputs: full.Inputs, Processors: full.Processors}
	for _, name := range names {
		t, ok := full.Targets[name]
		if !ok {
			continue
		}
		out.Targets = setKey(out.Targets, name, t)
		subs := t.Subscriptions
		if len(subs) == 0 {
			subs = sortedKeys(full.Subscriptions) // a target that names none runs every subscription
		}
		for _, sub := range subs {
			if sc, ok := full.Subscriptions[sub]; ok {
				out.Subscriptions = setKey(out.Subscriptions, sub, sc)
			}
		}
	}
	// Every pod gets every tunnel-target-match: a device may dial any of them.
	for name, m := range full.TunnelTargetMatches {
		out.TunnelTargetMatches = setKey(out.TunnelTargetMatches, name, m)
		for _, sub := range m.Config.Subscriptions {
			if sc, ok := full.Subscriptions[sub]; ok {
				out.Subscriptions = setKey(out.Subscriptions, sub, sc)
			}
		}
	}
	return out.Normalize()
}
