package gnmic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func sampleConfig() Config {
	return Config{
		Targets: map[string]TargetConfig{
			"ns/r1": {Address: "10.0.0.1:57400", Username: "admin", Password: "s3cret", Subscriptions: []string{"if", "cpu", "if"}},
			"ns/r2": {Name: "wrong", Address: "10.0.0.2:57400", Timeout: "30s", RetryTimer: "5s", SkipVerify: true, TLSKey: "KEYDATA"},
		},
		Subscriptions: map[string]SubscriptionConfig{
			"if":  {Paths: []string{"/interfaces"}, Mode: ModeStream, StreamMode: StreamModeSample, SampleInterval: "10s"},
			"cpu": {Name: "cpu", Paths: []string{"/cpu"}, Outputs: []string{"prom", "kafka"}},
		},
		Outputs: map[string]map[string]any{
			"prom":  {"type": "prometheus", "listen": ":9804"},
			"kafka": {"type": "kafka", "sasl": map[string]any{"user": "u", "password": "kpass"}},
		},
	}
}

func TestNormalizeNamesEveryObjectAfterItsKey(t *testing.T) {
	n := sampleConfig().Normalize()
	for key, target := range n.Targets {
		if target.Name != key {
			t.Errorf("target %q named %q", key, target.Name)
		}
	}
	for key, sub := range n.Subscriptions {
		if sub.Name != key {
			t.Errorf("subscription %q named %q", key, sub.Name)
		}
	}
	for key, out := range n.Outputs {
		if out["name"] != key {
			t.Errorf("output %q named %v", key, out["name"])
		}
	}
}

// A processor is {type: config}: the collector takes its type from the first key a Go map yields, so a name
// beside it would make it an unknown processor type every other time.
func TestNormalizeKeepsAProcessorToItsTypeAlone(t *testing.T) {
	c := Config{Processors: map[string]map[string]any{"trim": {"event-strings": map[string]any{"value-names": []any{".*"}}}}}
	n := c.Normalize()
	if got := n.Processors["trim"]; len(got) != 1 || got["event-strings"] == nil {
		t.Errorf("processor trim normalized to %v, want only its type key", got)
	}
}

func TestNormalizeDefaultsTimersAndKeepsExplicitOnes(t *testing.T) {
	n := sampleConfig().Normalize()
	tests := []struct {
		target, timeout, retry string
	}{
		{"ns/r1", DefaultTimeout, DefaultRetryTimer},
		{"ns/r2", "30s", "5s"},
	}
	for _, tt := range tests {
		got := n.Targets[tt.target]
		if got.Timeout != tt.timeout || got.RetryTimer != tt.retry {
			t.Errorf("%s: timeout %q retry-timer %q, want %q %q", tt.target, got.Timeout, got.RetryTimer, tt.timeout, tt.retry)
		}
	}
}

func TestNormalizeSortsAndDeduplicatesSetLikeLists(t *testing.T) {
	n := sampleConfig().Normalize()
	if got := n.Targets["ns/r1"].Subscriptions; !reflect.DeepEqual(got, []string{"cpu", "if"}) {
		t.Errorf("target subscriptions = %v", got)
	}
	if got := n.Subscriptions["cpu"].Outputs; !reflect.DeepEqual(got, []string{"kafka", "prom"}) {
		t.Errorf("subscription outputs = %v", got)
	}
}

func TestNormalizeNeitherModifiesItsInputNorChangesANormalizedConfig(t *testing.T) {
	in := sampleConfig()
	n := in.Normalize()
	if !reflect.DeepEqual(in, sampleConfig()) {
		t.Fatal("Normalize modified its input")
	}
	n.Outputs["prom"]["listen"] = ":1"
	if in.Outputs["prom"]["listen"] != ":9804" {
		t.Fatal("Normalize shares free-form objects with its input")
	}
	if again := n.Normalize(); !reflect.DeepEqual(again, n) {
		t.Fatalf("Normalize is not idempotent:\n%+v\n%+v", again, n)
	}
}

func TestTheEmptyConfigEncodesAsAnEmptyObject(t *testing.T) {
	for _, c := range []Config{{}, {Targets: map[string]TargetConfig{}, Outputs: map[string]map[string]any{}}} {
		body, err := c.body()
		if err != nil || string(body) != "{}" {
			t.Errorf("body = %s, %v; want {}", body, err)
		}
	}
}

func TestTargetsAlwaysSendInsecureAndSkipVerify(t *testing.T) {
	body, err := Config{Targets: map[string]TargetConfig{"r": {Address: "a:1"}}}.body()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"insecure":false`, `"skip-verify":false`, `"timeout":"10s"`, `"retry-timer":"10s"`, `"name":"r"`} {
		if !strings.Contains(string(body), key) {
			t.Errorf("body %s lacks %s", body, key)
		}
	}
	var decoded map[string]map[string]map[string]any
	if err := json.Unmarshal(body, &decoded); err != nil {
		t.Fatal(err)
	}
	if _, ok := decoded["targets"]["r"]["password"]; ok {
		t.Error("empty password must be omitted")
	}
}
