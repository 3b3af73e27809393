package gnmic

import (
	"strings"
	"testing"
)

func TestValidateFindsWhatTheCollectorWouldRejectOrFailOn(t *testing.T) {
	sub := map[string]SubscriptionConfig{"s": {Paths: []string{"/a"}}}
	tests := []struct {
		name    string
		config  Config
		wantErr string
	}{
		{"a valid config", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1"}}, Subscriptions: sub}, ""},
		{"the empty config", Config{}, ""},
		{"targets without subscriptions", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1"}}}, "at least one subscription"},
		{"inputs without outputs", Config{Inputs: map[string]map[string]any{"i": {"type": "nats"}}}, "at least one output"},
		{"a target without address", Config{Targets: map[string]TargetConfig{"r": {}}, Subscriptions: sub}, `target "r": address is empty`},
		{"a bare-number timeout", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1", Timeout: "10"}}, Subscriptions: sub}, "timeout: not a duration"},
		{"a zero retry-timer", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1", RetryTimer: "0s"}}, Subscriptions: sub}, "retry-timer: must be positive"},
		{"an undefined subscription", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1", Subscriptions: []string{"x"}}}, Subscriptions: sub}, `subscription "x" is not defined`},
		{"an undefined output", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1", Outputs: []string{"o"}}}, Subscriptions: sub}, `output "o" is not defined`},
		{"a grpc keepalive time that is not a duration", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1", GRPCKeepalive: &GRPCKeepaliveConfig{Time: "30"}}}, Subscriptions: sub}, "grpc-keepalive.time: not a duration"},
		{"a zero grpc keepalive timeout", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1", GRPCKeepalive: &GRPCKeepaliveConfig{Timeout: "0s"}}}, Subscriptions: sub}, "grpc-keepalive.timeout: must be positive"},
		{"a grpc keepalive that only permits pings without streams", Config{Targets: map[string]TargetConfig{"r": {Address: "a:1", GRPCKeepalive: &GRPCKeepaliveConfig{PermitWithoutStream: true}}}, Subscriptions: sub}, ""},
		{"a subscription without paths", Config{Subscriptions: map[string]SubscriptionConfig{"s": {}}}, `subscription "s": no paths`},
		{"an output applying an undefined processor", Config{Outputs: map[string]map[string]any{"o": {"type": "file", "event-processors": []string{"p"}}}},
			`output "o": event processor "p" is not defined`},
		{"an input applying an undefined processor", Config{Outputs: map[string]map[string]any{"o": {"type": "file"}},
			Inputs: map[string]map[string]any{"i": {"type": "nats", "outputs": []string{"o"}, "event-processors": []any{"p"}}}},
			`input "i": event processor "p" is not defined`},
		{"an output applying a defined processor", Config{Outputs: map[string]map[string]any{"o": {"type": "file", "event-processors": []string{"p"}}},
			Processors: map[string]map[string]any{"p": {"event-drop": map[string]any{}}}}, ""},
		{"a processor with a second key", Config{Processors: map[string]map[string]any{"p": {"event-drop": map[string]any{}, "name": "p"}}},
			`processor "p": has 2 keys`},
		{"a bad sample interval", Config{Subscriptions: map[string]SubscriptionConfig{"s": {Paths: []string{"/a"}, SampleInterval: "often"}}}, "sample-interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.config.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidationErrorsNeverQuoteValues(t *testing.T) {
	c := Config{Targets: map[string]TargetConfig{"r": {Password: "s3cret", Timeout: "s3cret"}}}
	if err := c.Validate(); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Validate() = %v", err)
	}
}
