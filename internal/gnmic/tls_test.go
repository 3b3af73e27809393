package gnmic_test

import (
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

func TestTheClientSpeaksMutualTLSWithACollector(t *testing.T) {
	pki, err := fakecollector.NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	collector := fakecollector.StartForTest(t, fakecollector.WithTLS(pki.ServerTLS()))
	withCert := &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientTLS()}}
	withoutCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.ClientTLS().RootCAs}}}
	plainURL := "http://" + strings.TrimPrefix(collector.URL(), "https://")

	tests := []struct {
		name    string
		url     string
		client  *http.Client
		wantErr bool
	}{
		{"client certificate signed by the CA", collector.URL(), withCert, false},
		{"no client certificate", collector.URL(), withoutCert, true},
		{"untrusted server", collector.URL(), http.DefaultClient, true},
		{"plain HTTP", plainURL, http.DefaultClient, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, err := gnmic.NewClient(tt.url, tt.client)
			if err != nil {
				t.Fatal(err)
			}
			err = client.Apply(testContext(t), twoRouters())
			if (err != nil) != tt.wantErr {
				t.Fatalf("Apply() = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && errors.As(err, new(*gnmic.ConfigRejectedError)) {
				t.Fatalf("a transport refusal is not a rejected config: %v", err)
			}
		})
	}
	if collector.ApplyCount() != 1 {
		t.Fatalf("%d applies reached the collector, want only the authenticated one", collector.ApplyCount())
	}
}
