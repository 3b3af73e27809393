package render

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// outputSecret is a value only a Secret holds: tests assert it reaches the configuration and never an error.
const outputSecret = "kafka-Pw-7Yq"

func secretRef(key, secret, secretKey string) v1alpha1.ConfigSecretRef {
	return v1alpha1.ConfigSecretRef{Key: key, SecretKeyRef: v1alpha1.SecretKeyReference{Name: secret, Key: secretKey}}
}

func TestSecretRefsSetConfigValuesFromSecrets(t *testing.T) {
	tests := []struct {
		name   string
		config string
		refs   []v1alpha1.ConfigSecretRef
		want   map[string]any // the keys of the rendered output besides type and name
	}{
		{
			name: "sets a top-level key", config: `{"address":"kafka:9092"}`,
			refs: []v1alpha1.ConfigSecretRef{secretRef("password", "kafka-creds", "password")},
			want: map[string]any{"address": "kafka:9092", "password": outputSecret},
		},
		{
			name: "sets a nested key inside an object config has", config: `{"sasl":{"user":"telemetry","mechanism":"PLAIN"}}`,
			refs: []v1alpha1.ConfigSecretRef{secretRef("sasl.password", "kafka-creds", "password")},
			want: map[string]any{"sasl": map[string]any{"user": "telemetry", "mechanism": "PLAIN", "password": outputSecret}},
		},
		{
			name: "makes the objects of a nested key config does not have", config: `{"address":"kafka:9092"}`,
			refs: []v1alpha1.ConfigSecretRef{secretRef("sasl.user", "kafka-creds", "username"), secretRef("sasl.password", "kafka-creds", "password")},
			want: map[string]any{"address": "kafka:9092", "sasl": map[string]any{"user": "telemetry", "password": outputSecret}},
		},
		{
			name: "replaces a value config has at the key", config: `{"password":"written-in-the-output"}`,
			refs: []v1alpha1.ConfigSecretRef{secretRef("password", "kafka-creds", "password")},
			want: map[string]any{"password": outputSecret},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			o := output("kafka", "kafka", tt.config)
			o.Spec.SecretRefs = tt.refs
			f.outputs["kafka"] = o
			f.conn.Secrets["kafka-creds"] = map[string][]byte{"username": []byte("telemetry"), "password": []byte(outputSecret)}
			cfg, skips, err := f.render("r1")
			if err != nil || len(skips) != 0 {
				t.Fatalf("render: %v, skips %v", err, skips)
			}
			got := cfg.Outputs["kafka"]
			want := map[string]any{"type": "kafka", "name": "kafka"}
			for k, v := range tt.want {
				want[k] = v
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("output:\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestSecretRefsOfInputs(t *testing.T) {
	f := newFixture()
	f.inputs["bus"].Input.Spec.SecretRefs = []v1alpha1.ConfigSecretRef{secretRef("password", "nats-creds", "password")}
	f.conn.Secrets["nats-creds"] = map[string][]byte{"password": []byte(outputSecret)}
	cfg, skips, err := f.render("r1")
	if err != nil || len(skips) != 0 {
		t.Fatalf("render: %v, skips %v", err, skips)
	}
	if got := cfg.Inputs["bus"]["password"]; got != outputSecret {
		t.Fatalf("input password = %v, want the Secret's value", got)
	}
}

func TestSecretRefsThatDoNotResolveSkipTheirObjectAndWhatDependsOnIt(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(f *fixture)
		wantSkips []string
		primary   string // the skip that says what is wrong; the others depend on it
		wantIs    error
		wantText  []string
	}{
		{
			name: "skips an output whose Secret does not exist, with the targets and inputs that send to it",
			setup: func(f *fixture) {
				f.outputs["file"].Spec.SecretRefs = []v1alpha1.ConfigSecretRef{secretRef("password", "gone", "password")}
				f.picks["r1"] = selectionTarget([]string{"counters"}, []string{"file"})
			},
			wantSkips: []string{"Input/bus", "Output/file", "Target/r1"},
			primary:   "Output/file",
			wantIs:    ErrSecretNotFound,
			wantText:  []string{`output "file"`, `spec.secretRefs[password]`, `secret "gone"`, "secret not found"},
		},
		{
			name: "skips an output whose Secret lacks the key",
			setup: func(f *fixture) {
				f.outputs["file"].Spec.SecretRefs = []v1alpha1.ConfigSecretRef{secretRef("password", "creds", "kafka-password")}
			},
			wantSkips: []string{"Input/bus", "Output/file"},
			primary:   "Output/file",
			wantIs:    ErrSecretKeyMissing,
			wantText:  []string{`output "file"`, `spec.secretRefs[password]`, `secret "creds"`, `missing key "kafka-password"`},
		},
		{
			name: "skips an input whose Secret does not exist",
			setup: func(f *fixture) {
				f.inputs["bus"].Input.Spec.SecretRefs = []v1alpha1.ConfigSecretRef{secretRef("password", "gone", "password")}
			},
			wantSkips: []string{"Input/bus"},
			primary:   "Input/bus",
			wantIs:    ErrSecretNotFound,
			wantText:  []string{`input "bus"`, `secret "gone"`},
		},
		{
			name: "skips an output whose nested key runs into a value that is not an object",
			setup: func(f *fixture) {
				f.outputs["file"].Spec.Config = rawJSON(`{"sasl":"plain"}`)
				f.outputs["file"].Spec.SecretRefs = []v1alpha1.ConfigSecretRef{secretRef("sasl.password", "creds", PasswordKey)}
			},
			wantSkips: []string{"Input/bus", "Output/file"},
			primary:   "Output/file",
			wantIs:    ErrNotAnObject,
			wantText:  []string{`output "file"`, `spec.secretRefs[sasl.password]`, `spec.config.sasl`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			tt.setup(f)
			cfg, skips, err := f.render("r1", "r2")
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			var got []string
			for _, s := range skips {
				got = append(got, string(s.Kind)+"/"+s.Name)
			}
			if !slices.Equal(got, tt.wantSkips) {
				t.Fatalf("skips = %v, want %v", got, tt.wantSkips)
			}
			var first SkipError
			for _, s := range skips {
				if string(s.Kind)+"/"+s.Name == tt.primary {
					first = s
				}
			}
			if !errors.Is(first, tt.wantIs) {
				t.Fatalf("skip %v is not %v", first, tt.wantIs)
			}
			for _, text := range tt.wantText {
				if !strings.Contains(first.Error(), text) {
					t.Errorf("skip %q does not say %q", first.Error(), text)
				}
			}
			for _, s := range skips {
				if strings.Contains(s.Error(), password) || strings.Contains(s.Error(), outputSecret) {
					t.Fatalf("skip %q shows a secret value", s.Error())
				}
			}
			if _, ok := cfg.Outputs["file"]; ok && slices.Contains(got, "Output/file") {
				t.Fatalf("a skipped output reached the configuration")
			}
		})
	}
}

func TestConfigSecretsAreTheSecretsSelectedOutputsAndInputsName(t *testing.T) {
	f := newFixture()
	f.outputs["file"].Spec.SecretRefs = []v1alpha1.ConfigSecretRef{secretRef("password", "out-b", "p"), secretRef("token", "shared", "t")}
	f.inputs["bus"].Input.Spec.SecretRefs = []v1alpha1.ConfigSecretRef{secretRef("password", "shared", "p"), secretRef("user", "in-a", "u")}
	if got, want := ConfigSecrets(f.selection()), []string{"in-a", "out-b", "shared"}; !slices.Equal(got, want) {
		t.Fatalf("ConfigSecrets = %v, want %v", got, want)
	}
}

func TestCheckSecretRefsSaysWhichSecretOrKeyIsMissing(t *testing.T) {
	secrets := map[string]map[string][]byte{"creds": {"password": []byte(outputSecret)}}
	tests := []struct {
		name   string
		refs   []v1alpha1.ConfigSecretRef
		wantIs error
	}{
		{name: "nothing is missing when every Secret and key exists", refs: []v1alpha1.ConfigSecretRef{secretRef("password", "creds", "password")}},
		{name: "nothing is missing without references"},
		{name: "a missing Secret", refs: []v1alpha1.ConfigSecretRef{secretRef("password", "creds", "password"), secretRef("token", "gone", "t")},
			wantIs: ErrSecretNotFound},
		{name: "a missing key", refs: []v1alpha1.ConfigSecretRef{secretRef("password", "creds", "pass")}, wantIs: ErrSecretKeyMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSecretRefs(tt.refs, secrets)
			if tt.wantIs == nil {
				if err != nil {
					t.Fatalf("CheckSecretRefs = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("CheckSecretRefs = %v, want %v", err, tt.wantIs)
			}
			if strings.Contains(err.Error(), outputSecret) {
				t.Fatalf("%q shows a secret value", err)
			}
		})
	}
}
