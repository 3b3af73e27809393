package render

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// historySnapshot is a time for spec.history, which no rendering may send.
var historySnapshot = metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))

func TestSkipsWhatCannotBeRenderedAndKeepsTheRest(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(f *fixture)
		onPod     []string
		wantSkips []string // "<kind>/<name>", sorted by kind then name
		wantIs    error    // cause of the first skip
		wantText  []string // fragments of the first skip's message
		wantKept  []string // targets that reach the pod
	}{
		{
			name:      "skips a target whose profile does not exist",
			setup:     func(f *fixture) { f.targets["r1"].Spec.Profile = "gone" },
			wantSkips: []string{"Target/r1"},
			wantIs:    ErrProfileNotFound,
			wantText:  []string{`target "r1"`, `profile "gone"`},
			wantKept:  []string{"r2"},
		},
		{
			name:      "skips the targets whose credentials secret does not exist",
			setup:     func(f *fixture) { delete(f.conn.Secrets, "creds") },
			wantSkips: []string{"Target/r1", "Target/r2"},
			wantIs:    ErrSecretNotFound,
			wantText:  []string{`target "r1"`, `profile "default"`, `credentials secret "creds"`},
			wantKept:  []string{},
		},
		{
			name:      "skips a target whose secret has a username but no password",
			setup:     func(f *fixture) { delete(f.conn.Secrets["creds"], PasswordKey) },
			wantSkips: []string{"Target/r1", "Target/r2"},
			wantIs:    ErrSecretKeyMissing,
			wantText:  []string{`target "r1"`, `profile "default"`, `credentials secret "creds"`, `missing key "password"`},
			wantKept:  []string{},
		},
		{
			name:      "skips a target whose secret has a password but no username",
			setup:     func(f *fixture) { delete(f.conn.Secrets["creds"], UsernameKey) },
			wantSkips: []string{"Target/r1", "Target/r2"},
			wantIs:    ErrSecretKeyMissing,
			wantText:  []string{`credentials secret "creds"`, `missing key "username"`},
			wantKept:  []string{},
		},
		{
			name:      "skips a target whose secret is empty",
			setup:     func(f *fixture) { f.conn.Secrets["creds"] = nil },
			wantSkips: []string{"Target/r1", "Target/r2"},
			wantIs:    ErrSecretKeyMissing,
			wantText:  []string{`credentials secret "creds"`, `needs "username" and "password", or "token"`},
			wantKept:  []string{},
		},
		{
			name: "skips a target whose tls secret does not exist",
			setup: func(f *fixture) {
				f.conn.Profiles["tls"] = profile("tls", v1alpha1.TargetProfileSpec{TLS: &v1alpha1.TargetTLS{SecretRef: "device-ca"}})
				f.targets["r1"].Spec.Profile = "tls"
			},
			wantSkips: []string{"Target/r1"},
			wantIs:    ErrSecretNotFound,
			wantText:  []string{`target "r1"`, `profile "tls"`, `tls secret "device-ca"`},
			wantKept:  []string{"r2"},
		},
		{
			name: "skips a target whose tls secret has a certificate without its key",
			setup: func(f *fixture) {
				f.conn.Profiles["tls"] = profile("tls", v1alpha1.TargetProfileSpec{TLS: &v1alpha1.TargetTLS{SecretRef: "client"}})
				f.conn.Secrets["client"] = map[string][]byte{CAFile: []byte("ca"), CertFile: []byte("cert")}
				f.targets["r1"].Spec.Profile = "tls"
			},
			wantSkips: []string{"Target/r1"},
			wantIs:    ErrSecretKeyMissing,
			wantText:  []string{`tls secret "client"`, `missing key "tls.key"`},
			wantKept:  []string{"r2"},
		},
		{
			name: "skips a target whose tls secret has a key without its certificate",
			setup: func(f *fixture) {
				f.conn.Profiles["tls"] = profile("tls", v1alpha1.TargetProfileSpec{TLS: &v1alpha1.TargetTLS{SecretRef: "client"}})
				f.conn.Secrets["client"] = map[string][]byte{KeyFile: []byte("key")}
				f.targets["r1"].Spec.Profile = "tls"
			},
			wantSkips: []string{"Target/r1"},
			wantIs:    ErrSecretKeyMissing,
			wantText:  []string{`tls secret "client"`, `missing key "tls.crt"`},
			wantKept:  []string{"r2"},
		},
		{
			name: "skips a target whose tls secret holds none of its files",
			setup: func(f *fixture) {
				f.conn.Profiles["tls"] = profile("tls", v1alpha1.TargetProfileSpec{TLS: &v1alpha1.TargetTLS{SecretRef: "other"}})
				f.conn.Secrets["other"] = map[string][]byte{"unrelated": []byte("x")}
				f.targets["r1"].Spec.Profile = "tls"
			},
			wantSkips: []string{"Target/r1"},
			wantIs:    ErrSecretKeyMissing,
			wantText:  []string{`tls secret "other"`, `missing key "ca.crt"`},
			wantKept:  []string{"r2"},
		},
		{
			name: "skips a target whose tls secret does not fit in the Cluster's target TLS Secret",
			setup: func(f *fixture) {
				f.conn.Profiles["tls"] = profile("tls", v1alpha1.TargetProfileSpec{TLS: &v1alpha1.TargetTLS{SecretRef: "big"}})
				f.conn.Secrets["big"] = map[string][]byte{CAFile: []byte("ca")}
				f.conn.TLSOmitted = map[string]error{"big": ErrTLSBundleFull}
				f.targets["r1"].Spec.Profile = "tls"
			},
			wantSkips: []string{"Target/r1"},
			wantIs:    ErrTLSBundleFull,
			wantText:  []string{`profile "tls"`, `tls secret "big"`, "1 MiB"},
			wantKept:  []string{"r2"},
		},
		{
			name: "skips a target whose name the collector cannot route",
			setup: func(f *fixture) {
				f.addTarget("a/b", "10.0.0.3:57400")
			},
			onPod:     []string{"a/b", "r1", "r2"},
			wantSkips: []string{"Target/a/b"},
			wantIs:    ErrInvalidName,
			wantText:  []string{`target "a/b"`},
			wantKept:  []string{"r1", "r2"},
		},
		{
			name:      "skips a target placed on the pod that is not selected",
			setup:     func(*fixture) {},
			onPod:     []string{"r1", "r2", "r9"},
			wantSkips: []string{"Target/r9"},
			wantIs:    ErrNotSelected,
			wantText:  []string{`target "r9"`},
			wantKept:  []string{"r1", "r2"},
		},
		{
			name: "skips a target whose address is empty, as the collector would reject it",
			setup: func(f *fixture) {
				f.targets["r1"].Spec.Address = ""
			},
			wantSkips: []string{"Target/r1"},
			wantText:  []string{`target "r1"`, "would reject", "address is empty"},
			wantKept:  []string{"r2"},
		},
		{
			name: "skips a subscription of unknown mode once, and the targets that use it",
			setup: func(f *fixture) {
				f.subscriptions["counters"].Spec.Mode = "SOMETIMES"
			},
			wantSkips: []string{"Subscription/counters", "Target/r1", "Target/r2"},
			wantIs:    ErrUnknownMode,
			wantText:  []string{`subscription "counters"`, `spec.mode "SOMETIMES"`},
			wantKept:  []string{},
		},
		{
			name: "skips a subscription without paths, and the targets that use it",
			setup: func(f *fixture) {
				f.subscriptions["counters"].Spec.Paths = nil
			},
			wantSkips: []string{"Subscription/counters", "Target/r1", "Target/r2"},
			wantText:  []string{`subscription "counters"`, "no paths"},
			wantKept:  []string{},
		},
		{
			name: "keeps a target whose other subscription renders only when all of them do",
			setup: func(f *fixture) {
				f.subscriptions["broken"] = subscription("broken", v1alpha1.SubscriptionSpec{Paths: []string{"/x"}, Mode: "SOMETIMES"})
				f.picks["r1"] = selectionTarget([]string{"broken", "counters"}, nil)
			},
			wantSkips: []string{"Subscription/broken", "Target/r1"},
			wantIs:    ErrUnknownMode,
			wantKept:  []string{"r2"},
		},
		{
			name: "skips a subscription that sets history, which the collector cannot decode, and the targets that use it",
			setup: func(f *fixture) {
				f.subscriptions["counters"].Spec.History = &v1alpha1.SubscriptionHistory{Snapshot: &historySnapshot}
			},
			wantSkips: []string{"Subscription/counters", "Target/r1", "Target/r2"},
			wantIs:    ErrHistoryNotSupported,
			wantText:  []string{`subscription "counters"`, "spec.history", "REST API"},
			wantKept:  []string{},
		},
		{
			name: "keeps the targets that do not use the subscription with history",
			setup: func(f *fixture) {
				f.subscriptions["replay"] = subscription("replay", v1alpha1.SubscriptionSpec{
					Paths: []string{"/interfaces"}, History: &v1alpha1.SubscriptionHistory{Start: &historySnapshot, End: &historySnapshot},
				})
				f.picks["r1"] = selectionTarget([]string{"replay"}, nil)
			},
			wantSkips: []string{"Subscription/replay", "Target/r1"},
			wantIs:    ErrHistoryNotSupported,
			wantText:  []string{`subscription "replay"`, "spec.history"},
			wantKept:  []string{"r2"},
		},
		{
			name: "skips an output whose config does not decode, and the targets and inputs that use it",
			setup: func(f *fixture) {
				f.outputs["file"].Spec.Config["sasl"] = apiextensionsv1.JSON{Raw: []byte(`{"password":"` + password)}
				f.picks["r1"] = selectionTarget([]string{"counters"}, []string{"file"})
			},
			wantSkips: []string{"Input/bus", "Output/file", "Target/r1"},
			wantIs:    ErrDependencySkipped,
			wantText:  []string{`input "bus"`, `output "file"`},
			wantKept:  []string{"r2"},
		},
		{
			name:      "skips an input whose pipelines select no output",
			setup:     func(f *fixture) { f.inputs["bus"] = selection.SelectedInput{Input: f.inputs["bus"].Input} },
			wantSkips: []string{"Input/bus"},
			wantIs:    ErrNoOutputs,
			wantText:  []string{`input "bus"`},
			wantKept:  []string{"r1", "r2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			tt.setup(f)
			onPod := tt.onPod
			if onPod == nil {
				onPod = []string{"r1", "r2"}
			}
			cfg, skips, err := f.render(onPod...)
			if err != nil {
				t.Fatalf("PodConfig: %v", err)
			}
			var got []string
			for _, s := range skips {
				got = append(got, string(s.Kind)+"/"+s.Name)
			}
			if !slices.Equal(got, tt.wantSkips) {
				t.Fatalf("skips = %v, want %v (%v)", got, tt.wantSkips, skips)
			}
			first := skips[0]
			if tt.wantIs != nil && !errors.Is(first, tt.wantIs) {
				t.Errorf("first skip %q is not %v", first, tt.wantIs)
			}
			for _, fragment := range tt.wantText {
				if !strings.Contains(first.Error(), fragment) {
					t.Errorf("first skip %q does not mention %s", first, fragment)
				}
			}
			if kept := sortedKeys(cfg.Targets); !slices.Equal(kept, tt.wantKept) {
				t.Errorf("targets on the pod = %v, want %v", kept, tt.wantKept)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("the rendered config does not validate: %v", err)
			}
			if body, err := json.Marshal(cfg); err != nil || strings.Contains(string(body), `"history"`) {
				t.Errorf("the rendered config carries history, which the collector refuses (err %v)", err)
			}
			for _, s := range skips {
				for _, secret := range []string{password, token, username} {
					if strings.Contains(s.Error(), secret) {
						t.Errorf("skip %q reveals a credential", s)
					}
				}
			}
		})
	}
}
