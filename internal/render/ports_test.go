package render

import (
	"errors"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

func TestAnOutputWhosePortIsTakenIsLeftOutAndTheOlderKeepsIt(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		outputs  map[string]string // name → config of a prometheus output
		created  map[string]time.Duration
		reserved map[int32]string
		wantKept []string
		// wantTaken is, per skipped output, what holds its port.
		wantTaken map[string]PortTakenError
	}{
		{
			name:     "two outputs on distinct ports are both kept",
			outputs:  map[string]string{"a": `{"listen":":9804"}`, "b": `{"listen":":9805"}`},
			wantKept: []string{"a", "b", "file"},
		},
		{
			name:      "of two outputs on the default port the older keeps it, whatever the names",
			outputs:   map[string]string{"a": `{}`, "b": `{"listen":":9804"}`},
			created:   map[string]time.Duration{"a": time.Minute, "b": 0},
			wantKept:  []string{"b", "file"},
			wantTaken: map[string]PortTakenError{"a": {Port: 9804, By: `output "b"`, Output: "b"}},
		},
		{
			name:      "outputs created at the same time are ordered by name",
			outputs:   map[string]string{"a": `{"listen":"0.0.0.0:9900"}`, "b": `{"listen":":9900"}`},
			wantKept:  []string{"a", "file"},
			wantTaken: map[string]PortTakenError{"b": {Port: 9900, By: `output "a"`, Output: "a"}},
		},
		{
			name:      "an output on a reserved port is left out",
			outputs:   map[string]string{"a": `{"listen":":7890"}`},
			reserved:  map[int32]string{7890: "the collectors' REST API (spec.api.restPort)"},
			wantKept:  []string{"file"},
			wantTaken: map[string]PortTakenError{"a": {Port: 7890, By: "the collectors' REST API (spec.api.restPort)"}},
		},
		{
			name:     "an output that listens on nothing the operator can tell claims nothing",
			outputs:  map[string]string{"a": `{"listen":"$PORT"}`, "b": `{"listen":"$PORT"}`},
			wantKept: []string{"a", "b", "file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			for name, config := range tt.outputs {
				o := output(name, "prometheus", config)
				o.CreationTimestamp = metav1.NewTime(t0.Add(tt.created[name]))
				f.outputs[name] = o
			}
			f.conn.ReservedPorts = tt.reserved
			cfg, skips, err := f.render("r1")
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for name := range cfg.Outputs {
				kept = append(kept, name)
			}
			slices.Sort(kept)
			if !slices.Equal(kept, tt.wantKept) {
				t.Errorf("outputs kept = %v, want %v", kept, tt.wantKept)
			}
			taken := map[string]PortTakenError{}
			for _, s := range skips {
				var pt PortTakenError
				if s.Kind == selection.KindOutput && errors.As(s, &pt) {
					if !errors.Is(s, ErrPortTaken) {
						t.Errorf("skip of %s is not ErrPortTaken", s.Name)
					}
					taken[s.Name] = pt
				}
			}
			if len(taken) != len(tt.wantTaken) {
				t.Fatalf("skipped for their port: %v, want %v", taken, tt.wantTaken)
			}
			for name, want := range tt.wantTaken {
				if taken[name] != want {
					t.Errorf("output %s: taken by %+v, want %+v", name, taken[name], want)
				}
			}
		})
	}
}

func TestATargetThatSendsToAnOutputLeftOutForItsPortIsLeftOutWithIt(t *testing.T) {
	f := newFixture()
	f.outputs["prom"] = output("prom", "prometheus", `{"listen":":7890"}`)
	f.picks["r1"] = selectionTarget([]string{"counters"}, []string{"prom"})
	f.conn.ReservedPorts = map[int32]string{7890: "the collectors' REST API"}
	cfg, skips, err := f.render("r1", "r2")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Targets["r1"]; ok {
		t.Errorf("r1 sends to a refused output, yet it was kept")
	}
	if _, ok := cfg.Targets["r2"]; !ok {
		t.Errorf("r2 does not send to the refused output, yet it was left out")
	}
	if len(skips) != 2 || skips[0].Name != "prom" || skips[1].Name != "r1" || !errors.Is(skips[1], ErrDependencySkipped) {
		t.Errorf("skips = %v", skips)
	}
}
