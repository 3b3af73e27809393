package fakecollector

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
)

func startTLS(t *testing.T) (*Collector, *PKI) {
	t.Helper()
	pki, err := NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	return StartForTest(t, WithTLS(pki.ServerTLS())), pki
}

func TestATLSCollectorServesClientsWithACertificateSignedByItsCA(t *testing.T) {
	c, pki := startTLS(t)
	if !strings.HasPrefix(c.URL(), "https://") {
		t.Fatalf("URL = %s, want https", c.URL())
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientTLS()}}
	resp, err := client.Post(c.URL()+"/api/v1/config/apply", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestATLSCollectorRefusesPlainHTTPAndClientsWithoutACertificate(t *testing.T) {
	c, pki := startTLS(t)
	plainURL := "http://" + strings.TrimPrefix(c.URL(), "https://")
	if resp, err := http.Post(plainURL+"/api/v1/config/apply", "application/json", strings.NewReader(`{}`)); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP accepted")
		}
	}
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.ClientTLS().RootCAs}}}
	if resp, err := noCert.Post(c.URL()+"/api/v1/config/apply", "application/json", strings.NewReader(`{}`)); err == nil {
		resp.Body.Close()
		t.Fatalf("client without certificate got status %d", resp.StatusCode)
	}
	if c.ApplyCount() != 0 || len(c.Requests()) != 0 {
		t.Fatalf("refused requests reached the API: %d applies", c.ApplyCount())
	}
}
