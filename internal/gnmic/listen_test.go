package gnmic

import "testing"

func TestOutputListenPort(t *testing.T) {
	tests := []struct {
		name   string
		output map[string]any
		want   int32
		ok     bool
	}{
		{"a prometheus output listens on 9804 by default", map[string]any{"type": "prometheus"}, 9804, true},
		{"an empty listen address is the default", map[string]any{"type": "prometheus", "listen": ""}, 9804, true},
		{"a prometheus output's listen address", map[string]any{"type": "prometheus", "listen": "0.0.0.0:9273"}, 9273, true},
		{"a gnmi output listens on 57400 by default", map[string]any{"type": "gnmi"}, 57400, true},
		{"a gnmi output's address", map[string]any{"type": "gnmi", "address": ":50051"}, 50051, true},
		{"an output that dials out listens on nothing", map[string]any{"type": "kafka", "address": "kafka:9092"}, 0, false},
		{"a variable cannot be told", map[string]any{"type": "prometheus", "listen": "$PORT"}, 0, false},
		{"a port out of range", map[string]any{"type": "prometheus", "listen": ":70000"}, 0, false},
		{"port zero", map[string]any{"type": "prometheus", "listen": ":0"}, 0, false},
		{"a unix socket", map[string]any{"type": "gnmi", "address": "unix:///tmp/s"}, 0, false},
		{"a value that is not a string", map[string]any{"type": "prometheus", "listen": 9804}, 0, false},
		{"no type", map[string]any{"listen": ":9804"}, 0, false},
	}
	for _, tt := range tests {
		if got, ok := OutputListenPort(tt.output); got != tt.want || ok != tt.ok {
			t.Errorf("%s: OutputListenPort = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
