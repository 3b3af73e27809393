package render

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// twoSubscriptions gives r1 "counters" and r2 "alarms".
func twoSubscriptions(f *fixture) {
	f.subscriptions["alarms"] = subscription("alarms", v1alpha1.SubscriptionSpec{Paths: []string{"/alarms"}})
	f.picks["r2"] = selectionTarget([]string{"alarms"}, nil)
}

func TestPodConfigContents(t *testing.T) {
	tests := []struct {
		name              string
		setup             func(f *fixture)
		onPod             []string
		wantTargets       []string
		wantSubscriptions []string
		wantOutputs       []string
		wantInputs        []string
	}{
		{
			name:              "sends the pod's targets and only the subscriptions they use",
			setup:             twoSubscriptions,
			onPod:             []string{"r1"},
			wantTargets:       []string{"r1"},
			wantSubscriptions: []string{"counters"},
			wantOutputs:       []string{"file"},
			wantInputs:        []string{"bus"},
		},
		{
			name:              "sends the subscriptions of every target on the pod",
			setup:             twoSubscriptions,
			onPod:             []string{"r2", "r1"},
			wantTargets:       []string{"r1", "r2"},
			wantSubscriptions: []string{"alarms", "counters"},
			wantOutputs:       []string{"file"},
			wantInputs:        []string{"bus"},
		},
		{
			name:        "sends every selected output and input to a pod without targets",
			setup:       func(f *fixture) { f.outputs["kafka"] = output("kafka", "kafka", "") },
			onPod:       nil,
			wantOutputs: []string{"file", "kafka"},
			wantInputs:  []string{"bus"},
		},
		{
			name:              "sends a target placed twice once",
			setup:             func(*fixture) {},
			onPod:             []string{"r1", "r1"},
			wantTargets:       []string{"r1"},
			wantSubscriptions: []string{"counters"},
			wantOutputs:       []string{"file"},
			wantInputs:        []string{"bus"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			tt.setup(f)
			cfg, skips, err := f.render(tt.onPod...)
			if err != nil || len(skips) > 0 {
				t.Fatalf("PodConfig: skips %v, error %v", skips, err)
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{
				{"targets", sortedKeys(cfg.Targets), tt.wantTargets},
				{"subscriptions", sortedKeys(cfg.Subscriptions), tt.wantSubscriptions},
				{"outputs", sortedKeys(cfg.Outputs), tt.wantOutputs},
				{"inputs", sortedKeys(cfg.Inputs), tt.wantInputs},
			} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

func TestOutputsAndInputsAreTheirConfigWithTypeNameAndOutputs(t *testing.T) {
	f := newFixture()
	f.outputs["kafka"] = output("kafka", "kafka", `{"address":"kafka:9092","max-retry":9007199254740993,"sasl":{"user":"u"}}`)
	f.inputs["bus"] = selectionInput(f.inputs["bus"].Input, "file", "kafka")
	cfg, skips, err := f.render()
	if err != nil || len(skips) > 0 {
		t.Fatalf("PodConfig: skips %v, error %v", skips, err)
	}
	body, err := json.Marshal(map[string]any{"outputs": cfg.Outputs, "inputs": cfg.Inputs})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"inputs":{"bus":{"address":"nats:4222","name":"bus","outputs":["file","kafka"],"type":"nats"}},` +
		`"outputs":{"file":{"filename":"/tmp/out","name":"file","type":"file"},` +
		`"kafka":{"address":"kafka:9092","max-retry":9007199254740993,"name":"kafka","sasl":{"user":"u"},"type":"kafka"}}}`
	if string(body) != want {
		t.Fatalf("outputs and inputs:\n got %s\nwant %s", body, want)
	}
}

func TestPodConfigIsNormalizedAndValid(t *testing.T) {
	f := newFixture()
	twoSubscriptions(f)
	cfg, _, err := f.render("r1", "r2")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, cfg.Normalize()) {
		t.Errorf("PodConfig is not in its Normalize form")
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("PodConfig does not validate: %v", err)
	}
}

func TestEqualInputsGiveTheSameHash(t *testing.T) {
	hash := func(f *fixture, onPod ...string) string {
		t.Helper()
		cfg, _, err := f.render(onPod...)
		if err != nil {
			t.Fatal(err)
		}
		h, err := cfg.Hash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	rich := func() *fixture {
		f := newFixture()
		twoSubscriptions(f)
		f.outputs["kafka"] = output("kafka", "kafka", `{"address":"kafka:9092","topics":["a","b"],"n":1.5}`)
		f.picks["r1"] = selectionTarget([]string{"counters"}, []string{"kafka", "file"})
		f.conn.Profiles["default"].Spec.Tags = map[string]string{"a": "1", "b": "2", "c": "3"}
		return f
	}
	base := hash(rich(), "r1", "r2")
	for round := range 20 {
		if got := hash(rich(), "r2", "r1", "r2"); got != base {
			t.Fatalf("round %d: hash %s differs from %s for equal inputs", round, got, base)
		}
	}
	changed := rich()
	changed.conn.Secrets["creds"][PasswordKey] = []byte("rotated")
	if hash(changed, "r1", "r2") == base {
		t.Fatalf("a rotated password does not change the hash, so it would not be pushed")
	}
}

func TestPodConfigDoesNotModifyItsInput(t *testing.T) {
	f := newFixture()
	f.picks["r1"] = selectionTarget([]string{"counters"}, []string{"file"})
	sel := f.selection()
	before := sel.Targets[0].Outputs[0]
	cfg, _, err := PodConfig(sel, []string{"r1"}, f.conn)
	if err != nil {
		t.Fatal(err)
	}
	target := cfg.Targets["r1"]
	target.Outputs[0] = "mutated"
	cfg.Outputs["file"]["type"] = "mutated"
	if sel.Targets[0].Outputs[0] != before || sel.Outputs["file"].Spec.Type != "file" {
		t.Fatalf("the rendered config shares memory with the selection")
	}
}

func TestSubsetOfTheFleetIsWhatThePodWouldBeRenderedAlone(t *testing.T) {
	for _, onPod := range [][]string{nil, {"r1"}, {"r2"}, {"r1", "r2"}, {"r2", "ghost"}} {
		f := newFixture()
		twoSubscriptions(f)
		all, _, err := f.render("r1", "r2")
		if err != nil {
			t.Fatal(err)
		}
		alone, _, err := f.render(onPod...)
		if err != nil {
			t.Fatal(err)
		}
		cut := Subset(all, onPod)
		if !reflect.DeepEqual(cut, alone) {
			t.Errorf("pod with %v: cut from the fleet\n%+v\nrendered alone\n%+v", onPod, cut, alone)
		}
	}
}
