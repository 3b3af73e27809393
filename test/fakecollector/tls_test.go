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

func TestATLSCollectorRefusesAClientCertificateFromAnotherCA(t *testing.T) {
	c, _ := startTLS(t)
	other, err := NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	// The client trusts the collector's certificate (it skips verification) and presents a certificate that a
	// CA other than the collector's signed: gNMIc with ca-file set and client-auth empty refuses it. It presents
	// it whatever CAs the collector asks for: crypto/tls by itself would send none.
	foreign := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &other.Client, nil
		}}}}
	if resp, err := foreign.Post(c.URL()+"/api/v1/config/apply", "application/json", strings.NewReader(`{}`)); err == nil {
		resp.Body.Close()
		t.Fatalf("client with another CA's certificate got status %d", resp.StatusCode)
	}
	if c.ApplyCount() != 0 || len(c.Requests()) != 0 {
		t.Fatalf("refused requests reached the API: %d applies", c.ApplyCount())
	}
}

func TestMutualTLSServesWithPEMFilesAsTheCollectorDoes(t *testing.T) {
	pki, err := NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	serverCert, serverKey := pki.ServerPEM()
	cfg, err := MutualTLS(serverCert, serverKey, pki.CAPEM)
	if err != nil {
		t.Fatal(err)
	}
	c := StartForTest(t, WithTLS(cfg))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientTLS()}}
	resp, err := client.Post(c.URL()+"/api/v1/config/apply", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.ClientTLS().RootCAs}}}
	if resp, err := noCert.Get(c.URL() + "/api/v1/targets"); err == nil {
		resp.Body.Close()
		t.Fatalf("client without certificate got status %d", resp.StatusCode)
	}
	if _, err := MutualTLS(serverCert, serverKey, []byte("not a certificate")); err == nil {
		t.Fatal("MutualTLS accepted a CA file without a certificate")
	}
}
