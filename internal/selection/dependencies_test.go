package selection

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func profile(name, credentials, tlsSecret string) v1alpha1.TargetProfile {
	p := v1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.TargetProfileSpec{CredentialsRef: credentials}}
	if tlsSecret != "" {
		p.Spec.TLS = &v1alpha1.TargetTLS{SecretRef: tlsSecret}
	}
	return p
}

func TestWhatASelectionNeedsFromProfilesAndSecrets(t *testing.T) {
	in := namespace(pipeline("p1", v1alpha1.PipelineSpec{TargetSelectors: []metav1.LabelSelector{{}}, SubscriptionRefs: []string{"state"}}))
	in.Targets[0].Spec.Profile = "secure"
	in.Targets[1].Spec.Profile = "secure"
	in.Targets[2].Spec.Profile = "lab"
	in.Targets[3].Spec.Profile = "missing"
	sel := Resolve("c1", in)
	secure, lab, unused := profile("secure", "creds", "device-ca"), profile("lab", "creds", ""), profile("unused", "other", "other-ca")
	profiles := map[string]*v1alpha1.TargetProfile{"secure": &secure, "lab": &lab, "unused": &unused}

	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"names each profile of the selected targets once, including missing ones", ProfilesOf(sel), []string{"lab", "missing", "secure"}},
		{"names the credentials and TLS secrets of the profiles in use", SecretsOf(sel, profiles), []string{"creds", "device-ca"}},
		{"names only the TLS secrets for the Cluster's target TLS Secret", TLSSecretsOf(sel, profiles), []string{"device-ca"}},
		{"names nothing for an empty selection", TLSSecretsOf(Selection{}, profiles), nil},
		{"names both secrets of one profile", SecretsOfProfile(&secure), []string{"creds", "device-ca"}},
		{"names no secret of a profile without credentials or TLS", SecretsOfProfile(&v1alpha1.TargetProfile{}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.got, tt.want) {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestProfilesUsingSecret(t *testing.T) {
	profiles := []v1alpha1.TargetProfile{profile("b", "creds", "ca"), profile("a", "creds", ""), profile("c", "", "creds")}
	tests := []struct {
		name   string
		secret string
		want   []string
	}{
		{"finds profiles using the secret for credentials or TLS, sorted", "creds", []string{"a", "b", "c"}},
		{"finds a profile using the secret for TLS only", "ca", []string{"b"}},
		{"finds nothing for an unused secret", "other", nil},
		{"finds nothing for the empty name", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProfilesUsingSecret(tt.secret, profiles); !slices.Equal(got, tt.want) {
				t.Fatalf("ProfilesUsingSecret(%q) = %v, want %v", tt.secret, got, tt.want)
			}
		})
	}
}
