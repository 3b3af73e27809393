package gnmic

import (
	"fmt"
	"regexp"
)

// TunnelTargetMatch is one of gNMIc's tunnel-target-matches (github.com/openconfig/gnmic,
// pkg/config/tunnel_server.go): when a device registers a target over the collector's gRPC tunnel with a type
// and an ID that both match (Go regexp.MatchString, so unanchored; an empty expression matches anything), the
// collector adds a target named after the ID, configured with Config, and dials it through the tunnel. Of
// several matching rules the collector takes the first by name. Such targets carry tunnel-target-type in their
// configuration, and an apply never removes them: they go when the device's tunnel closes or no rule matches it
// any more.
type TunnelTargetMatch struct {
	Type string `json:"type,omitempty"`
	ID   string `json:"id,omitempty"`
	// Config is the target's configuration; the collector sets its name (the device's ID) itself, and its
	// address means nothing (the tunnel is the connection).
	Config TargetConfig `json:"config"`
}

// TunnelTargetTypeKey is the key of a target's configuration, as GET /api/v1/targets shows it, that holds the
// type a dial-in device registered with; targets the operator pushes have none.
const TunnelTargetTypeKey = "tunnel-target-type"

// TunnelTargetType is the type the device registered with when the collector runs the target through its
// tunnel server, "" for a target it was sent.
func (t TargetState) TunnelTargetType() string { return t.Config.TunnelType }

// Matches tells whether a device registering with typ and id matches m, as the collector decides it. An
// expression that does not compile matches nothing (the collector logs the error and skips the rule).
func (m TunnelTargetMatch) Matches(typ, id string) bool {
	okID, err := regexp.MatchString(m.ID, id)
	if err != nil || !okID {
		return false
	}
	okType, err := regexp.MatchString(m.Type, typ)
	return err == nil && okType
}

func (m TunnelTargetMatch) normalize() TunnelTargetMatch {
	m.Config = m.Config.normalize("")
	return m
}

// validateTunnelTargetMatch checks what the collector would trip over: expressions that do not compile, timers
// that are not positive, and subscriptions or outputs the configuration does not define.
func (c Config) validateTunnelTargetMatch(name string, m TunnelTargetMatch) []error {
	var errs []error
	for _, e := range []struct{ field, expr string }{{"type", m.Type}, {"id", m.ID}} {
		if _, err := regexp.Compile(e.expr); err != nil {
			errs = append(errs, fmt.Errorf("tunnel-target-match %q: %s: %w", name, e.field, err))
		}
	}
	t := m.Config
	t.Name, t.Address = "tunnel-target-matches["+name+"]", "tunnel"
	return append(errs, c.validateTarget(t)...)
}
