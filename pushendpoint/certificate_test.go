package pushendpoint

import (
	"bytes"
	"crypto/tls"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gnmic-operator/gnmic-operator/internal/pki"
)

func TestIssueKeepsTheCAWhileItHolds(t *testing.T) {
	opts := DefaultOptions()
	opts.ServiceNamespace = "ops"
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := newServingCertificate(nil, nil, opts)
	c.now = func() time.Time { return now }

	secret := &corev1.Secret{}
	issued, err := c.issue(secret, false)
	if err != nil || !issued {
		t.Fatalf("an empty Secret: issued %v, %v", issued, err)
	}
	if secret.Labels["app.kubernetes.io/managed-by"] != "gnmic-operator" || secret.Namespace != "ops" {
		t.Fatalf("the Secret is not labelled for the write policy, or in the wrong namespace: %+v", secret.ObjectMeta)
	}
	if _, err := tls.X509KeyPair(secret.Data[certKey], secret.Data[keyKey]); err != nil {
		t.Fatalf("issued key pair: %v", err)
	}
	cert, _ := pki.ParseCert(secret.Data[certKey])
	if cert.DNSNames[0] != "gnmic-operator-targetsource-push.ops.svc" {
		t.Fatalf("DNS names %v", cert.DNSNames)
	}
	ca := append([]byte(nil), secret.Data[caCertKey]...)

	if issued, _ := c.issue(secret, true); issued {
		t.Fatal("a valid certificate was issued again")
	}

	c.names = append(c.names, "push.example.com")
	if issued, _ := c.issue(secret, true); !issued || !bytes.Equal(secret.Data[caCertKey], ca) {
		t.Fatalf("a missing DNS name: issued %v, CA kept %v", issued, bytes.Equal(secret.Data[caCertKey], ca))
	}
	cert, _ = pki.ParseCert(secret.Data[certKey])
	if cert.DNSNames[len(cert.DNSNames)-1] != "push.example.com" {
		t.Fatalf("DNS names %v", cert.DNSNames)
	}

	now = now.Add(250 * 24 * time.Hour) // two thirds of the serving certificate's year have passed
	if issued, _ := c.issue(secret, true); !issued || !bytes.Equal(secret.Data[caCertKey], ca) {
		t.Fatalf("a serving certificate due: issued %v, CA kept %v", issued, bytes.Equal(secret.Data[caCertKey], ca))
	}

	now = now.Add(4 * 365 * 24 * time.Hour) // and of the CA's five years
	if issued, _ := c.issue(secret, true); !issued || bytes.Equal(secret.Data[caCertKey], ca) {
		t.Fatalf("a CA due: issued %v, CA renewed %v", issued, !bytes.Equal(secret.Data[caCertKey], ca))
	}
}
