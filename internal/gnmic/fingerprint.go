package gnmic

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Hash is the SHA-256, in hex, of the JSON encoding of c.Normalize().
// encoding/json writes struct fields in a fixed order and map keys sorted, so
// equal configurations hash equally whatever order they were built in. It is
// not safe to show: anyone who can guess the rest of a configuration can
// confirm a guessed password by hashing it. Use Fingerprint for what others
// can read (status, logs); Hash serves comparisons the operator keeps to
// itself.
func (c Config) Hash() (string, error) {
	body, err := c.body()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), nil
}

// Fingerprint is the HMAC-SHA256, in hex, of the same encoding as Hash, keyed
// with key. Equal configurations fingerprint equally under one key, so a
// caller stores the fingerprint per pod and pushes only when it changes;
// without the key nobody can recompute it, so a fingerprint confirms nothing
// about the credentials it covers, and two keys give unrelated fingerprints of
// one configuration.
func (c Config) Fingerprint(key []byte) (string, error) {
	e, err := Encode(c)
	if err != nil {
		return "", err
	}
	return e.Fingerprint(key), nil
}

// Encoded is a configuration with its apply request body, encoded once (made
// by Encode only): a caller that fingerprints a configuration and then pushes
// it encodes it once (ApplyEncoded), and what was fingerprinted is exactly what
// is sent.
type Encoded struct {
	Config Config
	body   []byte
}

// Encode encodes c as Apply sends it: the JSON encoding of c.Normalize().
func Encode(c Config) (Encoded, error) {
	body, err := c.body()
	if err != nil {
		return Encoded{}, err
	}
	return Encoded{Config: c, body: body}, nil
}

// Fingerprint is Config.Fingerprint of e.Config, from the encoding e holds.
func (e Encoded) Fingerprint(key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(e.body)
	return hex.EncodeToString(mac.Sum(nil))
}

// body is the apply request body: the JSON encoding of c.Normalize().
func (c Config) body() ([]byte, error) {
	body, err := json.Marshal(c.Normalize())
	if err != nil {
		return nil, fmt.Errorf("encode collector config: %w", err)
	}
	return body, nil
}
