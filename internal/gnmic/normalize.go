package gnmic

import (
	"maps"
	"slices"
)

// Defaults sent for targets that do not set their own timers. The collector
// has no defaults for pushed targets: without a timeout it dials with a zero
// timeout and the target fails at once.
const (
	DefaultTimeout    = "10s"
	DefaultRetryTimer = "10s"
)

// Normalize returns the form of c that is sent to a collector and hashed:
//   - every object's name equals its map key (otherwise the collector stores
//     the object under a new name and restarts it on every apply), except
//     processors, which hold nothing but their type;
//   - every target has a timeout and a retry-timer (DefaultTimeout and
//     DefaultRetryTimer when empty);
//   - set-like lists (a target's subscriptions and outputs, a subscription's
//     outputs) are sorted and deduplicated, so equal configs hash equally;
//   - empty maps are nil, so an empty Config encodes as {}.
//
// Insecure and SkipVerify are plain booleans and therefore always explicit.
// Normalize never modifies c; it is idempotent.
func (c Config) Normalize() Config {
	var out Config
	for name, t := range c.Targets {
		out.Targets = setKey(out.Targets, name, t.normalize(name))
	}
	for name, s := range c.Subscriptions {
		out.Subscriptions = setKey(out.Subscriptions, name, s.normalize(name))
	}
	out.Outputs = normalizeObjects(c.Outputs, true)
	out.Inputs = normalizeObjects(c.Inputs, true)
	out.Processors = normalizeObjects(c.Processors, false)
	for name, m := range c.TunnelTargetMatches {
		out.TunnelTargetMatches = setKey(out.TunnelTargetMatches, name, m.normalize())
	}
	return out
}

func (t TargetConfig) normalize(name string) TargetConfig {
	t.Name = name
	if t.Timeout == "" {
		t.Timeout = DefaultTimeout
	}
	if t.RetryTimer == "" {
		t.RetryTimer = DefaultRetryTimer
	}
	t.Subscriptions = sortedSet(t.Subscriptions)
	t.Outputs = sortedSet(t.Outputs)
	t.CipherSuites = slices.Clone(t.CipherSuites)
	t.Tags = slices.Clone(t.Tags)
	t.EventTags = cloneOrNil(t.EventTags)
	t.Metadata = cloneOrNil(t.Metadata)
	if t.GRPCKeepalive != nil {
		keepalive := *t.GRPCKeepalive
		t.GRPCKeepalive = &keepalive
	}
	return t
}

func (s SubscriptionConfig) normalize(name string) SubscriptionConfig {
	s.Name = name
	s.Models = slices.Clone(s.Models)
	s.Paths = slices.Clone(s.Paths)
	s.Outputs = sortedSet(s.Outputs)
	if s.Qos != nil {
		qos := *s.Qos
		s.Qos = &qos
	}
	if len(s.StreamSubscriptions) > 0 {
		streams := make([]SubscriptionConfig, len(s.StreamSubscriptions))
		for i, sub := range s.StreamSubscriptions {
			streams[i] = sub.normalize(sub.Name)
		}
		s.StreamSubscriptions = streams
	} else {
		s.StreamSubscriptions = nil
	}
	return s
}

// normalizeObjects copies free-form objects (outputs, inputs, processors) and,
// when named, sets their "name" to the map key. Processors are not named: a
// processor is {type: config}, and the collector takes its type from the
// first key a Go map yields, so a "name" beside the type would make it fail
// as a processor of unknown type "name" every other time.
func normalizeObjects(in map[string]map[string]any, named bool) map[string]map[string]any {
	var out map[string]map[string]any
	for name, obj := range in {
		cp := make(map[string]any, len(obj)+1)
		for k, v := range obj {
			cp[k] = deepCopy(v)
		}
		if named {
			cp["name"] = name
		}
		out = setKey(out, name, cp)
	}
	return out
}

func setKey[V any](m map[string]V, key string, v V) map[string]V {
	if m == nil {
		m = make(map[string]V)
	}
	m[key] = v
	return m
}

func sortedSet(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

func cloneOrNil(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	return maps.Clone(in)
}

// deepCopy copies the JSON-like values found in free-form objects.
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
		return slices.Clone(v)
	case map[string]string:
		return maps.Clone(v)
	default:
		return v
	}
}
