package gnmic

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func tunnelConfig(m TunnelTargetMatch) Config {
	return Config{Subscriptions: map[string]SubscriptionConfig{"counters": {Paths: []string{"/x"}}},
		TunnelTargetMatches: map[string]TunnelTargetMatch{"leaves": m}}
}

func TestTunnelTargetMatchesAreValidatedAsTheCollectorWouldTripOverThem(t *testing.T) {
	good := TunnelTargetMatch{Type: "^GNMI_GNOI$", ID: "^leaf-", Config: TargetConfig{Insecure: true, Subscriptions: []string{"counters"}}}
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"a match with the defaults filled in", func(*Config) {}, ""},
		{"an ID that does not compile", func(c *Config) { m := c.TunnelTargetMatches["leaves"]; m.ID = "("; c.TunnelTargetMatches["leaves"] = m }, `tunnel-target-match "leaves": id`},
		{"an undefined subscription", func(c *Config) {
			m := c.TunnelTargetMatches["leaves"]
			m.Config.Subscriptions = []string{"gone"}
			c.TunnelTargetMatches["leaves"] = m
		}, `subscription "gone" is not defined`},
		{"no subscription at all", func(c *Config) { c.Subscriptions = nil }, "tunnel-target-matches need at least one subscription"},
		{"a timer that is not positive", func(c *Config) {
			m := c.TunnelTargetMatches["leaves"]
			m.Config.Timeout = "-1s"
			c.TunnelTargetMatches["leaves"] = m
		}, "timeout"},
	}
	for _, tt := range tests {
		c := tunnelConfig(good)
		tt.change(&c)
		err := c.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestTunnelTargetMatchesAreSentWithDefaultsAndLoggedWithoutSecrets(t *testing.T) {
	c := tunnelConfig(TunnelTargetMatch{ID: "^leaf-", Config: TargetConfig{Password: "s3cret", Insecure: true}})
	m := c.Normalize().TunnelTargetMatches["leaves"]
	if m.Config.Timeout != DefaultTimeout || m.Config.RetryTimer != DefaultRetryTimer || m.Config.Name != "" {
		t.Errorf("normalized config %+v: want gNMIc's timers and no name (the collector names it after the device)", m.Config)
	}
	body, err := json.Marshal(c.Normalize())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"tunnel-target-matches":{"leaves":{"id":"^leaf-","config":{`) {
		t.Errorf("apply body %s: want the key gNMIc's apply decodes", body)
	}
	redacted, _ := json.Marshal(c.Redacted())
	if strings.Contains(string(redacted), "s3cret") || strings.Contains(c.String(), "s3cret") {
		t.Errorf("redacted %s / %s shows the password", redacted, c.String())
	}
	if !strings.Contains(c.String(), "tunnel-target-matches: 1") {
		t.Errorf("String() = %s, want the matches counted", c.String())
	}
}

func TestTunnelTargetTypeTellsDialInTargetsFromPushedOnes(t *testing.T) {
	var states []TargetState
	body := `[{"name":"leaf-1","config":{"name":"leaf-1","tunnel-target-type":"GNMI_GNOI"},"state":{"state":"running"}},
		{"name":"r1","config":{"name":"r1","address":"10.0.0.1:57400"},"state":{"state":"running"}}]`
	if err := json.Unmarshal([]byte(body), &states); err != nil {
		t.Fatal(err)
	}
	if states[0].TunnelTargetType() != "GNMI_GNOI" || states[1].TunnelTargetType() != "" {
		t.Fatalf("types %q %q, want GNMI_GNOI and none", states[0].TunnelTargetType(), states[1].TunnelTargetType())
	}
}

// BenchmarkDecodeTargetStates decodes GET /api/v1/targets of a collector running 500 targets, each listed with
// its whole configuration as the collector stores it.
func BenchmarkDecodeTargetStates(b *testing.B) {
	var body strings.Builder
	body.WriteString("[")
	for i := range 500 {
		if i > 0 {
			body.WriteString(",")
		}
		fmt.Fprintf(&body, `{"name":"ns/r%04d","config":{"name":"ns/r%04d","address":"10.0.%d.%d:57400","username":"admin",`+
			`"password":"****","timeout":10000000000,"insecure":false,"skip-verify":true,"buffer-size":100,`+
			`"retry-timer":10000000000,"subscriptions":["interfaces","bgp","system"],"outputs":["prom"],`+
			`"tags":{"site":"par1","role":"leaf"},"event-tags":{"namespace":"ns"}},`+
			`"state":{"intended-state":"enabled","state":"running","last-updated":"2026-12-05T14:00:00Z",`+
			`"connection-state":"READY","subscriptions":{"interfaces":"running","bgp":"running","system":"running"}}}`,
			i, i, i/256, i%256)
	}
	body.WriteString("]")
	raw := []byte(body.String())
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		var states []TargetState
		if err := json.Unmarshal(raw, &states); err != nil || len(states) != 500 {
			b.Fatal(err, len(states))
		}
	}
}
