package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"
)

func TestIssuedCertificatesChainToTheirCA(t *testing.T) {
	now := time.Now()
	ca, err := NewCA("gnmic-operator test CA", now, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	server, err := NewServer(ca, "collector", []string{"c-0.c.ns.svc"}, []net.IP{net.ParseIP("127.0.0.1")}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client, err := NewClient(ca, "operator", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CertPEM)
	for _, tc := range []struct {
		name  string
		pair  KeyPair
		usage x509.ExtKeyUsage
		host  string
	}{
		{"a serving certificate verifies for its DNS name", server, x509.ExtKeyUsageServerAuth, "c-0.c.ns.svc"},
		{"a client certificate verifies for client auth", client, x509.ExtKeyUsageClientAuth, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, err := ParseCert(tc.pair.CertPEM)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: tc.host, KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if _, err := tls.X509KeyPair(tc.pair.CertPEM, tc.pair.KeyPEM); err != nil {
				t.Fatalf("key pair: %v", err)
			}
		})
	}
	cert, _ := ParseCert(server.CertPEM)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "other.ns.svc"}); err == nil {
		t.Fatal("a serving certificate verified for a name it was not issued for")
	}
}

func TestNeedsRenewalAfterTwoThirdsOfTheLifetime(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ca, err := NewCA("ca", now, 90*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := ParseCert(ca.CertPEM)
	lifetime := cert.NotAfter.Sub(cert.NotBefore)
	tests := []struct {
		name string
		at   time.Time
		want bool
	}{
		{"fresh", now, false},
		{"just before two thirds", cert.NotBefore.Add(lifetime*2/3 - time.Minute), false},
		{"at two thirds", cert.NotBefore.Add(lifetime * 2 / 3), true},
		{"expired", cert.NotAfter.Add(time.Hour), true},
		{"not valid yet", cert.NotBefore.Add(-time.Hour), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedsRenewal(ca.CertPEM, tc.at); got != tc.want {
				t.Fatalf("NeedsRenewal = %v, want %v", got, tc.want)
			}
		})
	}
	if !NeedsRenewal([]byte("garbage"), now) {
		t.Fatal("an unreadable certificate must be renewed")
	}
}
