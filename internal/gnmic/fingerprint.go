package gnmic

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Hash fingerprints the configuration a collector would receive: the SHA-256,
// in hex, of the JSON encoding of c.Normalize(). encoding/json writes struct
// fields in a fixed order and map keys sorted, so equal configurations hash
// equally whatever order they were built in. A caller stores the hash per pod
// and pushes only when it changes. The hash is safe to log and to store: it
// reveals nothing about the credentials it covers.
func (c Config) Hash() (string, error) {
	body, err := c.body()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), nil
}

// body is the apply request body: the JSON encoding of c.Normalize().
func (c Config) body() ([]byte, error) {
	body, err := json.Marshal(c.Normalize())
	if err != nil {
		return nil, fmt.Errorf("encode collector config: %w", err)
	}
	return body, nil
}
