package gnmic

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Validate reports, before anything is pushed, the configurations a collector
// would reject (400) or accept and then fail on: targets without a
// subscription or an address, inputs without an output, references to
// undefined subscriptions, outputs or event processors, processors that hold
// more than their type, and durations that do not parse or are
// not positive (a bare number means nanoseconds to the collector). It
// validates c.Normalize(), so unset timers are not errors. Messages name
// objects and fields, never values, so they are safe to log and to put in
// status.
func (c Config) Validate() error {
	n := c.Normalize()
	var errs []error
	if len(n.Targets) > 0 && len(n.Subscriptions) == 0 {
		errs = append(errs, errors.New("targets need at least one subscription"))
	}
	if len(n.TunnelTargetMatches) > 0 && len(n.Subscriptions) == 0 {
		errs = append(errs, errors.New("tunnel-target-matches need at least one subscription"))
	}
	for _, name := range sortedKeys(n.TunnelTargetMatches) {
		errs = append(errs, n.validateTunnelTargetMatch(name, n.TunnelTargetMatches[name])...)
	}
	if len(n.Inputs) > 0 && len(n.Outputs) == 0 {
		errs = append(errs, errors.New("inputs need at least one output"))
	}
	for _, name := range sortedKeys(n.Targets) {
		errs = append(errs, n.validateTarget(n.Targets[name])...)
	}
	for _, name := range sortedKeys(n.Subscriptions) {
		errs = append(errs, n.validateSubscription(n.Subscriptions[name])...)
	}
	for _, name := range sortedKeys(n.Outputs) {
		errs = append(errs, n.validateEventProcessors("output", name, n.Outputs[name])...)
	}
	for _, name := range sortedKeys(n.Inputs) {
		errs = append(errs, n.validateEventProcessors("input", name, n.Inputs[name])...)
	}
	for _, name := range sortedKeys(n.Processors) {
		if len(n.Processors[name]) != 1 {
			errs = append(errs, fmt.Errorf("processor %q: has %d keys, not only its type", name, len(n.Processors[name])))
		}
	}
	return errors.Join(errs...)
}

// validateEventProcessors finds the processors an output's or input's event-processors names that the
// configuration does not define: the collector would fail that output or input when it initialises it.
func (c Config) validateEventProcessors(kind, name string, obj map[string]any) []error {
	var names []string
	switch v := obj["event-processors"].(type) {
	case []string:
		names = v
	case []any:
		for _, item := range v {
			s, _ := item.(string)
			names = append(names, s)
		}
	}
	var errs []error
	for _, p := range names {
		if _, ok := c.Processors[p]; !ok {
			errs = append(errs, fmt.Errorf("%s %q: event processor %q is not defined", kind, name, p))
		}
	}
	return errs
}

func (c Config) validateTarget(t TargetConfig) []error {
	var errs []error
	if t.Address == "" {
		errs = append(errs, fmt.Errorf("target %q: address is empty", t.Name))
	}
	if err := positiveDuration(t.Timeout); err != nil {
		errs = append(errs, fmt.Errorf("target %q: timeout: %w", t.Name, err))
	}
	if err := positiveDuration(t.RetryTimer); err != nil {
		errs = append(errs, fmt.Errorf("target %q: retry-timer: %w", t.Name, err))
	}
	if t.TCPKeepalive != "" {
		if err := positiveDuration(t.TCPKeepalive); err != nil {
			errs = append(errs, fmt.Errorf("target %q: tcp-keepalive: %w", t.Name, err))
		}
	}
	if k := t.GRPCKeepalive; k != nil {
		for _, d := range []struct{ field, value string }{{"time", k.Time}, {"timeout", k.Timeout}} {
			if d.value == "" {
				continue
			}
			if err := positiveDuration(d.value); err != nil {
				errs = append(errs, fmt.Errorf("target %q: grpc-keepalive.%s: %w", t.Name, d.field, err))
			}
		}
	}
	for _, sub := range t.Subscriptions {
		if _, ok := c.Subscriptions[sub]; !ok {
			errs = append(errs, fmt.Errorf("target %q: subscription %q is not defined", t.Name, sub))
		}
	}
	for _, out := range t.Outputs {
		if _, ok := c.Outputs[out]; !ok {
			errs = append(errs, fmt.Errorf("target %q: output %q is not defined", t.Name, out))
		}
	}
	return errs
}

func (c Config) validateSubscription(s SubscriptionConfig) []error {
	var errs []error
	if len(s.Paths) == 0 && len(s.StreamSubscriptions) == 0 {
		errs = append(errs, fmt.Errorf("subscription %q: no paths", s.Name))
	}
	if s.SampleInterval != "" {
		if err := positiveDuration(s.SampleInterval); err != nil {
			errs = append(errs, fmt.Errorf("subscription %q: sample-interval: %w", s.Name, err))
		}
	}
	if s.HeartbeatInterval != "" {
		if err := positiveDuration(s.HeartbeatInterval); err != nil {
			errs = append(errs, fmt.Errorf("subscription %q: heartbeat-interval: %w", s.Name, err))
		}
	}
	for _, out := range s.Outputs {
		if _, ok := c.Outputs[out]; !ok {
			errs = append(errs, fmt.Errorf("subscription %q: output %q is not defined", s.Name, out))
		}
	}
	return errs
}

func positiveDuration(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration with a unit, such as 10s")
	}
	if d <= 0 {
		return errors.New("must be positive")
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
