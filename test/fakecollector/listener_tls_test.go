package fakecollector

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// filesOf serves the PKI's files as a collector's filesystem would.
func filesOf(p *PKI, caPEM []byte) func(string) ([]byte, error) {
	cert, key := p.ServerPEM()
	files := map[string][]byte{"/tls/tls.crt": cert, "/tls/tls.key": key, "/tls/ca.crt": caPEM}
	return func(path string) ([]byte, error) {
		if data, ok := files[path]; ok {
			return data, nil
		}
		return nil, fmt.Errorf("no file %s", path)
	}
}

func TestAListenerTrustsTheCAOfItsCAFileAsGNMIcDoes(t *testing.T) {
	own, err := NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	section := func(ca, auth string) ListenerTLSSection {
		return ListenerTLSSection{CAFile: ca, CertFile: "/tls/tls.crt", KeyFile: "/tls/tls.key", ClientAuth: auth}
	}
	for _, tc := range []struct {
		name    string
		section ListenerTLSSection
		caPEM   []byte
		// the answers to a client with the own CA's certificate, another CA's, and none
		own, foreign, none bool
	}{
		{"ca-file with client-auth empty requires a certificate of that CA", section("/tls/ca.crt", ""), own.CAPEM, true, false, false},
		{"require-verify", section("/tls/ca.crt", "require-verify"), own.CAPEM, true, false, false},
		{"verify-if-given admits a client without a certificate", section("/tls/ca.crt", "verify-if-given"), own.CAPEM, true, false, true},
		{"a ca-file of another CA refuses the own CA's clients", section("/tls/ca.crt", ""), other.CAPEM, false, true, false},
		{"neither ca-file nor client-auth asks for nothing", section("", ""), nil, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ListenerTLS(tc.section, filesOf(own, tc.caPEM))
			if err != nil {
				t.Fatal(err)
			}
			c := StartForTest(t, WithTLS(cfg))
			for _, client := range []struct {
				name  string
				certs []tls.Certificate
				want  bool
			}{{"own", []tls.Certificate{own.Client}, tc.own}, {"foreign", []tls.Certificate{other.Client}, tc.foreign}, {"none", nil, tc.none}} {
				certs := client.certs
				// The client presents its certificate whatever CAs the server asks for (crypto/tls by itself
				// sends none they did not issue), so that the listener's own check is what is tested.
				hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: own.pool(),
					GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
						if len(certs) == 0 {
							return &tls.Certificate{}, nil
						}
						return &certs[0], nil
					}}}}
				resp, err := hc.Post(c.URL()+"/api/v1/config/apply", "application/json", strings.NewReader(`{}`))
				if err == nil {
					resp.Body.Close()
				}
				if got := err == nil; got != client.want {
					t.Errorf("client with the %s certificate: served = %v, want %v (%v)", client.name, got, client.want, err)
				}
			}
		})
	}
	if _, err := ListenerTLS(section("/tls/ca.crt", "sometimes"), filesOf(own, own.CAPEM)); err == nil {
		t.Fatal("an unknown client-auth was accepted")
	}
	if _, err := ListenerTLS(section("/tls/missing.crt", ""), filesOf(own, own.CAPEM)); err == nil {
		t.Fatal("a missing ca-file was accepted")
	}
}
