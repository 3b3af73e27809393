package render

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

func tunnelPolicy(name, profile string, subs ...string) *v1alpha1.TunnelTargetPolicy {
	return &v1alpha1.TunnelTargetPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.TunnelTargetPolicySpec{Match: v1alpha1.TunnelTargetMatch{Type: "^GNMI_GNOI$", ID: "^leaf-"},
			Profile: profile, SubscriptionRefs: subs}}
}

func TestTunnelTargetMatchesRenderEachPolicyFromItsProfileAndSubscriptions(t *testing.T) {
	f := newFixture()
	p := f.conn.Profiles["default"]
	p.Spec.Timeout = &metav1.Duration{Duration: 5 * time.Second}
	p.Spec.Tags = map[string]string{"site": "par"}
	outputs := map[string]map[string]any{"file": {"type": "file"}}
	withOutput := tunnelPolicy("leaves", "default", "counters")
	withOutput.Spec.OutputRefs = []string{"file"}

	cfg, skips := TunnelTargetMatches([]*v1alpha1.TunnelTargetPolicy{withOutput}, f.subscriptions, outputs, f.conn)
	if len(skips) != 0 {
		t.Fatalf("skips %v", skips)
	}
	want := gnmic.TunnelTargetMatch{Type: "^GNMI_GNOI$", ID: "^leaf-", Config: gnmic.TargetConfig{
		Username: username, Password: password, Timeout: "5s", RetryTimer: gnmic.DefaultRetryTimer, Insecure: true,
		Subscriptions: []string{"counters"}, Outputs: []string{"file"},
		EventTags: map[string]string{"site": "par", "tunnel-target-policy": "leaves"}}}
	if got := cfg.TunnelTargetMatches["leaves"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("match:\n got %+v\nwant %+v", got, want)
	}
	if _, ok := cfg.Subscriptions["counters"]; !ok || len(cfg.Subscriptions) != 1 {
		t.Fatalf("subscriptions %v, want the policy's counters", cfg.Subscriptions)
	}
	if len(cfg.Targets) != 0 || len(cfg.Outputs) != 0 {
		t.Fatalf("targets %v outputs %v: the matches come alone, to be merged into every pod's configuration", cfg.Targets, cfg.Outputs)
	}
}

func TestATunnelPolicyThatCannotRenderIsLeftOutAloneWithWhy(t *testing.T) {
	f := newFixture()
	f.conn.Profiles["broken"] = profile("broken", v1alpha1.TargetProfileSpec{CredentialsRef: "absent"})
	noOutput := tunnelPolicy("d-no-output", "default", "counters")
	noOutput.Spec.OutputRefs = []string{"kafka"}
	badRegex := tunnelPolicy("e-bad-regex", "default", "counters")
	badRegex.Spec.Match.ID = "leaf-("
	policies := []*v1alpha1.TunnelTargetPolicy{
		tunnelPolicy("a-no-profile", "absent", "counters"),
		tunnelPolicy("b-no-secret", "broken", "counters"),
		tunnelPolicy("c-no-subscription", "default", "absent"),
		noOutput, badRegex,
		tunnelPolicy("z-good", "default", "counters"),
	}
	cfg, skips := TunnelTargetMatches(policies, f.subscriptions, map[string]map[string]any{}, f.conn)
	if len(cfg.TunnelTargetMatches) != 1 || cfg.TunnelTargetMatches["z-good"].ID != "^leaf-" {
		t.Fatalf("matches %v, want z-good alone", cfg.TunnelTargetMatches)
	}
	wantErr := map[string]string{"a-no-profile": "target profile not found", "b-no-secret": "secret not found",
		"c-no-subscription": "subscription not found", "d-no-output": `output "kafka"`, "e-bad-regex": "missing closing )"}
	if len(skips) != len(wantErr) {
		t.Fatalf("skips %v, want one per broken policy", skips)
	}
	for _, s := range skips {
		if s.Kind != KindTunnelTargetPolicy || !strings.Contains(s.Error(), wantErr[s.Name]) {
			t.Errorf("skip %v, want %q", s, wantErr[s.Name])
		}
		if strings.Contains(s.Error(), password) {
			t.Errorf("skip %v shows a credential", s)
		}
	}
	if !errors.Is(skips[0], ErrProfileNotFound) {
		t.Errorf("skip %v: want ErrProfileNotFound", skips[0])
	}
}

func TestSubsetGivesEveryPodEveryTunnelTargetMatchWithItsSubscriptions(t *testing.T) {
	f := newFixture()
	full, _, err := PodConfig(f.selection(), []string{"r1", "r2"}, f.conn)
	if err != nil {
		t.Fatal(err)
	}
	f.subscriptions["tunnel-only"] = subscription("tunnel-only", v1alpha1.SubscriptionSpec{Paths: []string{"/system"}})
	tunnel, _ := TunnelTargetMatches([]*v1alpha1.TunnelTargetPolicy{tunnelPolicy("leaves", "default", "tunnel-only")},
		f.subscriptions, full.Outputs, f.conn)
	full.TunnelTargetMatches = tunnel.TunnelTargetMatches
	full.Subscriptions["tunnel-only"] = tunnel.Subscriptions["tunnel-only"]

	for _, onPod := range [][]string{{"r1"}, nil} {
		pod := Subset(full, onPod)
		if _, ok := pod.TunnelTargetMatches["leaves"]; !ok {
			t.Errorf("pod with %v: no tunnel-target-match", onPod)
		}
		if _, ok := pod.Subscriptions["tunnel-only"]; !ok {
			t.Errorf("pod with %v: the match's subscription is missing", onPod)
		}
		if err := pod.Validate(); err != nil {
			t.Errorf("pod with %v: %v", onPod, err)
		}
	}
}
