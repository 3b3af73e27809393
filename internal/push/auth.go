package push

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// SignatureHeader carries the HMAC-SHA256 of the request body, as GitHub's webhooks send it:
// "sha256=" followed by the 64 lower- or upper-case hex digits of HMAC-SHA256(key, body).
const SignatureHeader = "X-Signature-256"

// signaturePrefix names the algorithm in SignatureHeader's value.
const signaturePrefix = "sha256="

// Scheme is how a post proves it comes from the inventory.
type Scheme string

const (
	// Bearer: "Authorization: Bearer <token>", the token being the Secret's value.
	Bearer Scheme = "Bearer"
	// HMACSHA256: SignatureHeader holds the HMAC-SHA256 of the body keyed with the Secret's value.
	HMACSHA256 Scheme = "HMACSHA256"
)

// ErrUnauthenticated is the cause of every refusal of Authenticate; the message says what was wrong
// without revealing anything of the secret.
var ErrUnauthenticated = errors.New("unauthenticated")

// Credential is the shared secret of a TargetSource and how posts present it.
type Credential struct {
	Scheme Scheme
	Secret []byte
}

// Authenticate accepts a post whose headers present the credential for this body. An empty secret accepts
// nothing: a Secret whose key is empty must not open the endpoint to everyone. A replayed post (the same body
// with the same signature) is accepted: a snapshot or a delta applied twice leaves the same records.
func (c Credential) Authenticate(header http.Header, body []byte) error {
	if len(c.Secret) == 0 {
		return fmt.Errorf("%w: the TargetSource's secret is empty", ErrUnauthenticated)
	}
	switch c.Scheme {
	case Bearer:
		return c.authenticateBearer(header)
	case HMACSHA256:
		return c.authenticateSignature(header, body)
	default:
		return fmt.Errorf("%w: unknown authentication scheme %q", ErrUnauthenticated, c.Scheme)
	}
}

func (c Credential) authenticateBearer(header http.Header) error {
	value := header.Get("Authorization")
	if value == "" {
		return fmt.Errorf("%w: no Authorization header", ErrUnauthenticated)
	}
	scheme, token, found := strings.Cut(value, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return fmt.Errorf("%w: the Authorization header is not a bearer token", ErrUnauthenticated)
	}
	// Constant time over the token's content; only its length can leak, as with any comparison of this kind.
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), c.Secret) != 1 {
		return fmt.Errorf("%w: wrong bearer token", ErrUnauthenticated)
	}
	return nil
}

func (c Credential) authenticateSignature(header http.Header, body []byte) error {
	value := header.Get(SignatureHeader)
	if value == "" {
		return fmt.Errorf("%w: no %s header", ErrUnauthenticated, SignatureHeader)
	}
	if !strings.HasPrefix(value, signaturePrefix) {
		return fmt.Errorf("%w: %s must be %s<hex>", ErrUnauthenticated, SignatureHeader, signaturePrefix)
	}
	got, err := hex.DecodeString(strings.TrimPrefix(value, signaturePrefix))
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: %s is not %d hex digits after %s", ErrUnauthenticated, SignatureHeader, 2*sha256.Size, signaturePrefix)
	}
	if !hmac.Equal(got, Sign(c.Secret, body)) {
		return fmt.Errorf("%w: %s does not match the body", ErrUnauthenticated, SignatureHeader)
	}
	return nil
}

// Sign is HMAC-SHA256(secret, body).
func Sign(secret, body []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return mac.Sum(nil)
}

// SignatureHeaderValue is what a sender puts in SignatureHeader for this body.
func SignatureHeaderValue(secret, body []byte) string {
	return signaturePrefix + hex.EncodeToString(Sign(secret, body))
}
