package render

import (
	"encoding/json"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// Credentials of the fixtures. Tests assert that they never show up in an
// error.
const (
	username = "admin-Xq7"
	password = "hunter2-Zk9"
	token    = "tok-Pw3"
)

// fixture is one Cluster's selection and connections: targets r1 and r2 with
// profile "default" (credentials from Secret "creds", no TLS), subscription
// "counters", output "file" and input "bus" feeding "file".
type fixture struct {
	targets       map[string]*v1alpha1.Target
	subscriptions map[string]*v1alpha1.Subscription
	outputs       map[string]*v1alpha1.Output
	inputs        map[string]selection.SelectedInput
	picks         map[string]selection.SelectedTarget // subscriptions, outputs and labels per target
	conn          Connections
}

func newFixture() *fixture {
	f := &fixture{
		targets:       map[string]*v1alpha1.Target{},
		subscriptions: map[string]*v1alpha1.Subscription{"counters": subscription("counters", v1alpha1.SubscriptionSpec{Paths: []string{"/interfaces"}})},
		outputs:       map[string]*v1alpha1.Output{"file": output("file", "file", `{"filename":"/tmp/out"}`)},
		inputs:        map[string]selection.SelectedInput{"bus": {Input: input("bus", `{"address":"nats:4222"}`), Outputs: []string{"file"}}},
		picks:         map[string]selection.SelectedTarget{},
		conn: Connections{
			Profiles: map[string]*v1alpha1.TargetProfile{"default": profile("default", v1alpha1.TargetProfileSpec{CredentialsRef: "creds"})},
			Secrets:  map[string]map[string][]byte{"creds": {UsernameKey: []byte(username), PasswordKey: []byte(password)}},
		},
	}
	f.addTarget("r1", "10.0.0.1:57400")
	f.addTarget("r2", "10.0.0.2:57400")
	return f
}

// addTarget selects a target with profile "default" and subscription
// "counters".
func (f *fixture) addTarget(name, address string) {
	f.targets[name] = &v1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.TargetSpec{Address: address, Profile: "default"}}
	f.picks[name] = selection.SelectedTarget{Subscriptions: []string{"counters"}}
}

func (f *fixture) selection() selection.Selection {
	sel := selection.Selection{Subscriptions: f.subscriptions, Outputs: f.outputs, Inputs: f.inputs}
	for _, name := range sortedKeys(f.targets) {
		st := f.picks[name]
		st.Target = f.targets[name]
		sel.Targets = append(sel.Targets, st)
	}
	return sel
}

func (f *fixture) render(onPod ...string) (gnmic.Config, []SkipError, error) {
	return PodConfig(f.selection(), onPod, f.conn)
}

// selectionTarget is what pipelines apply to a target (its Target is filled
// in by fixture.selection).
func selectionTarget(subscriptions, outputs []string) selection.SelectedTarget {
	return selection.SelectedTarget{Subscriptions: subscriptions, Outputs: outputs}
}

func selectionInput(in *v1alpha1.Input, outputs ...string) selection.SelectedInput {
	return selection.SelectedInput{Input: in, Outputs: outputs}
}

func profile(name string, spec v1alpha1.TargetProfileSpec) *v1alpha1.TargetProfile {
	return &v1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func subscription(name string, spec v1alpha1.SubscriptionSpec) *v1alpha1.Subscription {
	return &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func output(name, typ, config string) *v1alpha1.Output {
	return &v1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.OutputSpec{Type: typ, Config: rawJSON(config)}}
}

func input(name, config string) *v1alpha1.Input {
	return &v1alpha1.Input{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.InputSpec{Type: "nats", Config: rawJSON(config)}}
}

// rawJSON splits a JSON object into a spec.config; "" is no config.
func rawJSON(s string) map[string]apiextensionsv1.JSON {
	if s == "" {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &fields); err != nil {
		panic(err)
	}
	config := make(map[string]apiextensionsv1.JSON, len(fields))
	for k, v := range fields {
		config[k] = apiextensionsv1.JSON{Raw: v}
	}
	return config
}

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func ptr[T any](v T) *T { return &v }
