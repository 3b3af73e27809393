package render

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

func TestTargetRendering(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fixture)
		want  func(t *gnmic.TargetConfig) // applied to the rendering of r1 with the plain fixture
	}{
		{
			name:  "sends the target's name and address, the credentials, default timers and insecure without tls",
			setup: func(*fixture) {},
			want:  func(*gnmic.TargetConfig) {},
		},
		{
			name: "sends a token alone when the secret holds only a token",
			setup: func(f *fixture) {
				f.conn.Secrets["creds"] = map[string][]byte{TokenKey: []byte(token)}
			},
			want: func(t *gnmic.TargetConfig) { t.Username, t.Password, t.Token = "", "", token },
		},
		{
			name: "sends everything the secret holds of username, password and token",
			setup: func(f *fixture) {
				f.conn.Secrets["creds"][TokenKey] = []byte(token)
			},
			want: func(t *gnmic.TargetConfig) { t.Token = token },
		},
		{
			name: "connects without credentials when the profile names no secret",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.CredentialsRef = ""
			},
			want: func(t *gnmic.TargetConfig) { t.Username, t.Password = "", "" },
		},
		{
			name: "sends the profile's timeout and retry timer as duration strings",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.Timeout = dur(90 * time.Second)
				f.conn.Profiles["default"].Spec.RetryTimer = dur(2 * time.Second)
			},
			want: func(t *gnmic.TargetConfig) { t.Timeout, t.RetryTimer = "1m30s", "2s" },
		},
		{
			name: "verifies the device with the system roots when tls has no secret",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.TLS = &v1alpha1.TargetTLS{}
			},
			want: func(t *gnmic.TargetConfig) { t.Insecure = false },
		},
		{
			name: "skips verification when tls.skipVerify is set",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.TLS = &v1alpha1.TargetTLS{SkipVerify: true}
			},
			want: func(t *gnmic.TargetConfig) { t.Insecure, t.SkipVerify = false, true },
		},
		{
			name: "sends the server name, versions and cipher suites of tls",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.TLS = &v1alpha1.TargetTLS{
					ServerName: "leaf1.example", MinVersion: "1.2", MaxVersion: "1.3",
					CipherSuites: []string{"TLS_AES_128_GCM_SHA256"},
				}
			},
			want: func(t *gnmic.TargetConfig) {
				t.Insecure = false
				t.TLSServerName, t.TLSMinVersion, t.TLSMaxVersion = "leaf1.example", "1.2", "1.3"
				t.CipherSuites = []string{"TLS_AES_128_GCM_SHA256"}
			},
		},
		{
			name: "points at the CA and client certificate in the Cluster's target TLS mount, named after the tls secret",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.TLS = &v1alpha1.TargetTLS{SecretRef: "device-tls"}
				f.conn.Secrets["device-tls"] = map[string][]byte{CAFile: []byte("ca"), CertFile: []byte("cert"), KeyFile: []byte("key")}
			},
			want: func(t *gnmic.TargetConfig) {
				t.Insecure = false
				t.TLSCA = "/var/run/gnmic/tls/device-tls__ca.crt"
				t.TLSCert = "/var/run/gnmic/tls/device-tls__tls.crt"
				t.TLSKey = "/var/run/gnmic/tls/device-tls__tls.key"
			},
		},
		{
			name: "points at the CA only when the tls secret has no client certificate",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.TLS = &v1alpha1.TargetTLS{SecretRef: "device-ca"}
				f.conn.Secrets["device-ca"] = map[string][]byte{CAFile: []byte("ca")}
			},
			want: func(t *gnmic.TargetConfig) {
				t.Insecure = false
				t.TLSCA = "/var/run/gnmic/tls/device-ca__ca.crt"
			},
		},
		{
			name: "sends the encoding, gzip, tcp keepalive, and the proxy as the socks5 URL gNMIc needs",
			setup: func(f *fixture) {
				spec := &f.conn.Profiles["default"].Spec
				spec.Encoding, spec.Gzip, spec.Proxy, spec.TCPKeepalive = "JSON_IETF", true, "socks:1080", dur(30*time.Second)
			},
			want: func(t *gnmic.TargetConfig) {
				t.Encoding, t.Gzip, t.Proxy, t.TCPKeepalive = "JSON_IETF", true, "socks5://socks:1080", "30s"
			},
		},
		{
			name: "passes a proxy that already has a scheme through",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.Proxy = "socks5://[2001:db8::1]:1080"
			},
			want: func(t *gnmic.TargetConfig) { t.Proxy = "socks5://[2001:db8::1]:1080" },
		},
		{
			name: "leaves out a zero tcp keepalive",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.TCPKeepalive = dur(0)
			},
			want: func(*gnmic.TargetConfig) {},
		},
		{
			name: "sends the profile's grpc keepalive",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.GRPCKeepalive = &v1alpha1.GRPCKeepalive{
					Time: dur(30 * time.Second), Timeout: dur(10 * time.Second), PermitWithoutStream: true,
				}
			},
			want: func(t *gnmic.TargetConfig) {
				t.GRPCKeepalive = &gnmic.GRPCKeepaliveConfig{Time: "30s", Timeout: "10s", PermitWithoutStream: true}
			},
		},
		{
			name: "leaves out an empty grpc keepalive, which would make gRPC ping every 10s",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.GRPCKeepalive = &v1alpha1.GRPCKeepalive{Time: dur(0)}
			},
			want: func(*gnmic.TargetConfig) {},
		},
		{
			name: "merges event tags: target tags over pipeline labels over profile tags",
			setup: func(f *fixture) {
				f.conn.Profiles["default"].Spec.Tags = map[string]string{"site": "profile", "vendor": "acme", "role": "profile"}
				pick := f.picks["r1"]
				pick.Labels = map[string]string{"role": "pipeline", "env": "prod", "site": "pipeline"}
				f.picks["r1"] = pick
				f.targets["r1"].Spec.Tags = map[string]string{"site": "par1"}
			},
			want: func(t *gnmic.TargetConfig) {
				t.EventTags = map[string]string{"site": "par1", "vendor": "acme", "role": "pipeline", "env": "prod"}
			},
		},
		{
			name: "sends the selected subscriptions and outputs, sorted",
			setup: func(f *fixture) {
				f.subscriptions["alarms"] = subscription("alarms", v1alpha1.SubscriptionSpec{Paths: []string{"/alarms"}})
				f.outputs["kafka"] = output("kafka", "kafka", "")
				f.picks["r1"] = selectionTarget([]string{"counters", "alarms"}, []string{"kafka", "file"})
			},
			want: func(t *gnmic.TargetConfig) {
				t.Subscriptions = []string{"alarms", "counters"}
				t.Outputs = []string{"file", "kafka"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			tt.setup(f)
			cfg, skips, err := f.render("r1")
			if err != nil || len(skips) > 0 {
				t.Fatalf("PodConfig: skips %v, error %v", skips, err)
			}
			want := gnmic.TargetConfig{
				Name: "r1", Address: "10.0.0.1:57400", Username: username, Password: password,
				Timeout: "10s", RetryTimer: "10s", Insecure: true, Subscriptions: []string{"counters"},
			}
			tt.want(&want)
			if got := cfg.Targets["r1"]; !reflect.DeepEqual(got, want) {
				t.Fatalf("target r1:\n got %#v\nwant %#v", got.Redacted(), want.Redacted())
			}
		})
	}
}

func TestTargetWithoutSelectedOutputsSendsAnEmptyListMeaningAllOutputs(t *testing.T) {
	f := newFixture()
	f.outputs["kafka"] = output("kafka", "kafka", "")
	cfg, _, err := f.render("r1")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Targets["r1"].Outputs; len(got) != 0 {
		t.Fatalf("outputs of r1 = %v, want none (all outputs)", got)
	}
	if got := len(cfg.Outputs); got != 2 {
		t.Fatalf("pod has %d outputs, want every selected output (2)", got)
	}
}

func TestEveryTargetOfAProfileSendsItsGRPCKeepaliveWithGNMIcKeys(t *testing.T) {
	f := newFixture()
	f.conn.Profiles["default"].Spec.GRPCKeepalive = &v1alpha1.GRPCKeepalive{Time: dur(time.Minute), PermitWithoutStream: true}
	cfg, skips, err := f.render("r1", "r2")
	if err != nil || len(skips) > 0 {
		t.Fatalf("PodConfig: skips %v, error %v", skips, err)
	}
	body, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Targets map[string]map[string]json.RawMessage `json:"targets"`
	}
	if err := json.Unmarshal(body, &decoded); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"r1", "r2"} {
		if got, want := string(decoded.Targets[name]["grpc-keepalive"]), `{"time":"1m0s","permit-without-stream":true}`; got != want {
			t.Errorf("grpc-keepalive of %s = %s, want %s", name, got, want)
		}
	}
}

func TestChangingTheGRPCKeepaliveChangesTheHash(t *testing.T) {
	hash := func(keepalive *v1alpha1.GRPCKeepalive) string {
		t.Helper()
		f := newFixture()
		f.conn.Profiles["default"].Spec.GRPCKeepalive = keepalive
		cfg, _, err := f.render("r1", "r2")
		if err != nil {
			t.Fatal(err)
		}
		h, err := cfg.Hash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash(&v1alpha1.GRPCKeepalive{Time: dur(30 * time.Second)})
	for name, changed := range map[string]*v1alpha1.GRPCKeepalive{
		"removed":                        nil,
		"another time":                   {Time: dur(time.Minute)},
		"a timeout added":                {Time: dur(30 * time.Second), Timeout: dur(5 * time.Second)},
		"pings permitted with no stream": {Time: dur(30 * time.Second), PermitWithoutStream: true},
	} {
		if hash(changed) == base {
			t.Errorf("grpc keepalive %s does not change the hash, so it would not be pushed", name)
		}
	}
}
