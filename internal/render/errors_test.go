package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

func TestSkipErrorsNameTheSecretButNeverQuoteItsValues(t *testing.T) {
	f := newFixture()
	f.conn.Secrets["creds"] = map[string][]byte{PasswordKey: []byte(password), TokenKey: nil}
	f.conn.Profiles["tls"] = profile("tls", v1alpha1.TargetProfileSpec{TLS: &v1alpha1.TargetTLS{SecretRef: "device"}})
	f.conn.Secrets["device"] = map[string][]byte{CertFile: []byte(password)}
	f.targets["r2"].Spec.Profile = "tls"
	_, skips, err := f.render("r1", "r2")
	if err != nil {
		t.Fatal(err)
	}
	wantSecret := map[string]string{"r1": `credentials secret "creds"`, "r2": `tls secret "device"`}
	if len(skips) != len(wantSecret) {
		t.Fatalf("skips = %v, want both targets skipped", skips)
	}
	for _, s := range skips {
		if strings.Contains(s.Error(), password) {
			t.Errorf("skip %q contains the password", s)
		}
		if !strings.Contains(s.Error(), wantSecret[s.Name]) {
			t.Errorf("skip %q does not name %s", s, wantSecret[s.Name])
		}
	}
}

func TestSkipErrorNamesTheObject(t *testing.T) {
	err := error(SkipError{Kind: selection.KindTarget, Name: "r1", Err: ErrNotSelected})
	if got, want := err.Error(), `target "r1": not selected by the Cluster's pipelines`; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	var skip SkipError
	if !errors.As(err, &skip) || skip.Name != "r1" || !errors.Is(err, ErrNotSelected) {
		t.Fatalf("SkipError does not unwrap: %#v", err)
	}
}
