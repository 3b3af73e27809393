package gnmic

import (
	"testing"
)

func mustHash(t *testing.T, c Config) string {
	t.Helper()
	h, err := c.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHashIsStableAcrossBuildOrderAndEquivalentForms(t *testing.T) {
	a := sampleConfig()
	b := sampleConfig()
	b.Targets["ns/r1"] = TargetConfig{Address: "10.0.0.1:57400", Username: "admin", Password: "s3cret", Subscriptions: []string{"cpu", "if"}, Timeout: DefaultTimeout}
	if mustHash(t, a) != mustHash(t, b) {
		t.Fatal("equivalent configs hash differently")
	}
	if mustHash(t, a) != mustHash(t, a.Normalize()) {
		t.Fatal("a config and its normal form hash differently")
	}
	if got := mustHash(t, Config{}); len(got) != 64 {
		t.Fatalf("hash %q is not hex SHA-256", got)
	}
}

func TestHashChangesWhenAnythingSentChanges(t *testing.T) {
	base := mustHash(t, sampleConfig())
	tests := []struct {
		name   string
		change func(*Config)
	}{
		{"a password", func(c *Config) { r := c.Targets["ns/r1"]; r.Password = "other"; c.Targets["ns/r1"] = r }},
		{"an address", func(c *Config) { r := c.Targets["ns/r2"]; r.Address = "x:1"; c.Targets["ns/r2"] = r }},
		{"a removed target", func(c *Config) { delete(c.Targets, "ns/r2") }},
		{"a subscription path", func(c *Config) { s := c.Subscriptions["if"]; s.Paths = []string{"/x"}; c.Subscriptions["if"] = s }},
		{"an output field", func(c *Config) { c.Outputs["prom"]["listen"] = ":1" }},
		{"an added input", func(c *Config) { c.Inputs = map[string]map[string]any{"i": {"type": "nats"}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sampleConfig()
			tt.change(&c)
			if mustHash(t, c) == base {
				t.Fatal("hash did not change")
			}
		})
	}
}

func TestHashFailsOnValuesJSONCannotEncode(t *testing.T) {
	c := Config{Outputs: map[string]map[string]any{"o": {"f": func() {}}}}
	if _, err := c.Hash(); err == nil {
		t.Fatal("Hash() succeeded on a function value")
	}
}

func TestFingerprintIsKeyedSoThatEqualConfigurationsCannotBeConfirmed(t *testing.T) {
	fingerprint := func(c Config, key string) string {
		t.Helper()
		f, err := c.Fingerprint([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := sampleConfig(), sampleConfig()
	if fingerprint(a, "key-1") != fingerprint(b, "key-1") {
		t.Fatal("equal configurations fingerprint differently under one key")
	}
	if fingerprint(a, "key-1") != fingerprint(a.Normalize(), "key-1") {
		t.Fatal("a config and its normal form fingerprint differently")
	}
	if fingerprint(a, "key-1") == fingerprint(a, "key-2") {
		t.Fatal("two keys give the same fingerprint: it does not depend on the key")
	}
	if fingerprint(a, "key-1") == mustHash(t, a) {
		t.Fatal("the fingerprint is the plain SHA-256 anyone can recompute")
	}
	if got := fingerprint(Config{}, "k"); len(got) != 64 {
		t.Fatalf("fingerprint %q is not hex HMAC-SHA256", got)
	}
	changed := sampleConfig()
	r := changed.Targets["ns/r1"]
	r.Password = "other"
	changed.Targets["ns/r1"] = r
	if fingerprint(changed, "key-1") == fingerprint(a, "key-1") {
		t.Fatal("a changed password leaves the fingerprint as it was")
	}
}
