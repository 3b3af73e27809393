package pki

import (
	"crypto/sha256"
	"testing"
	"time"
)

func TestSignedByGivesTheSameAnswerRememberedOrNot(t *testing.T) {
	now := time.Now()
	ca, err := NewCA("ca", now, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCA("other", now, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client, err := NewClient(ca, "operator", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		cert, ca []byte
		want     bool
	}{
		{"signed by its CA", client.CertPEM, ca.CertPEM, true},
		{"another CA", client.CertPEM, other.CertPEM, false},
		{"no certificate", []byte("not a PEM"), ca.CertPEM, false},
		{"no CA", client.CertPEM, nil, false},
		// The digest covers both PEMs apart: the same bytes split otherwise are another pair.
		{"the CA as the certificate", ca.CertPEM, client.CertPEM, false},
	} {
		for _, pass := range []string{"first", "remembered"} {
			if got := SignedBy(tc.cert, tc.ca); got != tc.want {
				t.Errorf("%s, %s: SignedBy = %v, want %v", tc.name, pass, got, tc.want)
			}
		}
	}
}

func TestNeedsRenewalRememberedAnswersFollowTheClock(t *testing.T) {
	now := time.Now()
	ca, err := NewCA("ca", now, 90*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Remembered is the validity window, not the answer: the same certificate needs renewal later.
	for range 2 {
		if NeedsRenewal(ca.CertPEM, now) {
			t.Fatal("a new CA needs renewal")
		}
		if !NeedsRenewal(ca.CertPEM, now.Add(61*time.Hour)) {
			t.Fatal("a CA two thirds through its lifetime does not need renewal")
		}
		if !NeedsRenewal([]byte("garbage"), now) {
			t.Fatal("an unreadable certificate does not need renewal")
		}
	}
}

func TestRememberedChecksStartOverWhenFull(t *testing.T) {
	var c checks[int]
	for i := range rememberedChecks {
		c.put(sha256.Sum256([]byte{byte(i), byte(i >> 8)}), i)
	}
	if v, ok := c.get(sha256.Sum256([]byte{1, 0})); !ok || v != 1 {
		t.Fatalf("an answer of a full memory: %v, %v", v, ok)
	}
	c.put(sha256.Sum256([]byte("one more")), -1)
	if len(c.answers) != 1 {
		t.Fatalf("%d answers after one more than the memory holds, want 1", len(c.answers))
	}
	if v, ok := c.get(sha256.Sum256([]byte("one more"))); !ok || v != -1 {
		t.Fatalf("the latest answer: %v, %v", v, ok)
	}
}
