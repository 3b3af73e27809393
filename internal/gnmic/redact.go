package gnmic

import (
	"fmt"
	"strings"
)

// RedactedValue replaces secrets in Redacted copies.
const RedactedValue = "****"

// Redacted returns a copy of c that is safe to log: target passwords, tokens
// and TLS keys are replaced by RedactedValue, and so is every value whose key
// looks secret (see secretKey) anywhere inside outputs, inputs and
// processors. c is not modified.
func (c Config) Redacted() Config {
	out := c.Normalize()
	for name, t := range out.Targets {
		out.Targets[name] = t.Redacted()
	}
	redactObjects(out.Outputs)
	redactObjects(out.Inputs)
	redactObjects(out.Processors)
	for name, m := range out.TunnelTargetMatches {
		m.Config = m.Config.Redacted()
		out.TunnelTargetMatches[name] = m
	}
	return out
}

// Redacted returns a copy of t with its password, token and TLS key masked.
func (t TargetConfig) Redacted() TargetConfig {
	t.Password = mask(t.Password)
	t.Token = mask(t.Token)
	t.TLSKey = mask(t.TLSKey)
	return t
}

// String summarises c without any value from it, so that formatting a Config
// with %v by mistake cannot leak a credential.
func (c Config) String() string {
	return fmt.Sprintf("gnmic.Config{targets: %d, subscriptions: %d, outputs: %d, inputs: %d, processors: %d, tunnel-target-matches: %d}",
		len(c.Targets), len(c.Subscriptions), len(c.Outputs), len(c.Inputs), len(c.Processors), len(c.TunnelTargetMatches))
}

// String names t and its address, never its credentials.
func (t TargetConfig) String() string {
	return fmt.Sprintf("target %s (%s)", t.Name, t.Address)
}

// redactedConfig has Config's fields and JSON form but none of its methods, so
// that a logger serialising it does not call MarshalLog again.
type redactedConfig Config

// MarshalLog lets logr-based loggers (which look for this method) log the
// redacted configuration instead of the real one.
func (c Config) MarshalLog() any {
	return redactedConfig(c.Redacted())
}

// redactedTarget mirrors redactedConfig for a single target.
type redactedTarget TargetConfig

// MarshalLog lets logr-based loggers log the target without its secrets.
func (t TargetConfig) MarshalLog() any {
	return redactedTarget(t.Redacted())
}

func redactObjects(objects map[string]map[string]any) {
	for _, obj := range objects {
		redactValue(obj)
	}
}

// redactValue masks, in place, secret-looking keys of v and of everything
// nested in it. v must be a copy (Normalize deep-copies free-form objects).
func redactValue(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if secretKey(k) {
				if s, ok := e.(string); ok && s == "" {
					continue
				}
				v[k] = RedactedValue
				continue
			}
			redactValue(e)
		}
	case []any:
		for _, e := range v {
			redactValue(e)
		}
	}
}

// secretKey reports whether a configuration key names a secret value rather
// than, say, the path of a file holding one.
func secretKey(key string) bool {
	k := strings.ToLower(key)
	if strings.HasSuffix(k, "-file") || strings.HasSuffix(k, "_file") {
		return false
	}
	for _, word := range []string{"password", "passwd", "token", "secret", "credential", "private-key"} {
		if strings.Contains(k, word) {
			return true
		}
	}
	return k == "tls-key" || k == "key" || k == "api-key" || k == "apikey"
}

func mask(s string) string {
	if s == "" {
		return ""
	}
	return RedactedValue
}
