package pki

import (
	"crypto/sha256"
	"crypto/x509"
	"sync"
	"time"
)

// The operator checks the same certificates of the same Secrets on every reconcile of every Cluster:
// whether each needs renewal (NeedsRenewal) and whether it is signed by its CA (SignedBy). Parsing a
// certificate and checking a signature are the costly part, and their answers depend only on the PEM bytes,
// so they are remembered by a digest of those bytes. Each memory holds at most rememberedChecks answers and
// starts over when full.
const rememberedChecks = 8192

// checks is a bounded memory of answers by digest.
type checks[V any] struct {
	mu      sync.Mutex
	answers map[[sha256.Size]byte]V
}

func (c *checks[V]) get(key [sha256.Size]byte) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.answers[key]
	return v, ok
}

func (c *checks[V]) put(key [sha256.Size]byte, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil || len(c.answers) >= rememberedChecks {
		c.answers = map[[sha256.Size]byte]V{}
	}
	c.answers[key] = v
}

// validity is a certificate's validity window; ok is false when the PEM holds no certificate.
type validity struct {
	notBefore, notAfter time.Time
	ok                  bool
}

var (
	validities checks[validity]
	signatures checks[bool]
)

// validityOf is the validity window of the first certificate of certPEM.
func validityOf(certPEM []byte) validity {
	key := sha256.Sum256(certPEM)
	if v, ok := validities.get(key); ok {
		return v
	}
	var v validity
	if cert, err := ParseCert(certPEM); err == nil {
		v = validity{notBefore: cert.NotBefore, notAfter: cert.NotAfter, ok: true}
	}
	validities.put(key, v)
	return v
}

// SignedBy tells whether the certificate in certPEM verifies against the CA certificate in caPEM (a renewed
// CA invalidates what it signed). The answer is remembered for the same two PEMs, so it is the one given
// while both certificates were valid: a caller renews a certificate before it expires (NeedsRenewal), which
// changes its PEM.
func SignedBy(certPEM, caPEM []byte) bool {
	h := sha256.New()
	h.Write(certPEM)
	h.Write([]byte{0})
	h.Write(caPEM)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if ok, found := signatures.get(key); found {
		return ok
	}
	ok := verify(certPEM, caPEM)
	signatures.put(key, ok)
	return ok
}

func verify(certPEM, caPEM []byte) bool {
	cert, err := ParseCert(certPEM)
	if err != nil {
		return false
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return false
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err == nil
}
