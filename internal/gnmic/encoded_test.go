package gnmic_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// An encoded configuration is sent exactly as it was fingerprinted: the body the collector receives is the
// one whose keyed hash the caller stored, and Apply of the configuration sends the same bytes.
func TestAnEncodedConfigurationIsSentAsItWasFingerprinted(t *testing.T) {
	var bodies [][]byte
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		bodies = append(bodies, body)
	}))
	t.Cleanup(server.Close)
	client := newClient(t, server.URL)
	key := []byte("fingerprint key")

	cfg := twoRouters()
	e, err := gnmic.Encode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fingerprint, err := cfg.Fingerprint(key)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Fingerprint(key); got != fingerprint {
		t.Fatalf("Encoded.Fingerprint = %s, Config.Fingerprint = %s", got, fingerprint)
	}
	if err := client.ApplyEncoded(testContext(t), e); err != nil {
		t.Fatal(err)
	}
	if err := client.Apply(testContext(t), cfg); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d applies received, want 2", len(bodies))
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(bodies[0])
	if sent := hex.EncodeToString(mac.Sum(nil)); sent != fingerprint {
		t.Fatalf("the body sent fingerprints as %s, the configuration as %s", sent, fingerprint)
	}
	if string(bodies[1]) != string(bodies[0]) {
		t.Fatalf("Apply sent %s, ApplyEncoded %s", bodies[1], bodies[0])
	}
}
