package credentials

import (
	"crypto/rand"
	"fmt"
)

// The fingerprints of collector configurations that Cluster status shows (status.collectors[].configHash) are
// HMAC-SHA256 keyed with a random key per Cluster, kept under fingerprintKeyKey in the operator's Secret
// <cluster>-api-ca (Keeper.OperatorSecret): a plain hash of a configuration that holds passwords would let
// anyone who reads the status confirm a guessed password, and tell which Clusters share one. The operator
// compares only fingerprints it computed itself with the same key, after a restart too. A key lost with its
// Secret is drawn anew: every fingerprint changes once, and each collector is pushed its unchanged
// configuration again.
const (
	fingerprintKeyKey  = "fingerprint.key"
	fingerprintKeySize = 32
)

// fillFingerprintKey draws a fingerprint key into the operator's Secret data when it holds none.
func fillFingerprintKey(data map[string][]byte) (bool, error) {
	if len(data[fingerprintKeyKey]) == fingerprintKeySize {
		return false, nil
	}
	key := make([]byte, fingerprintKeySize)
	if _, err := rand.Read(key); err != nil {
		return false, fmt.Errorf("draw a fingerprint key: %w", err)
	}
	data[fingerprintKeyKey] = key
	return true, nil
}

// FingerprintKey is the fingerprint key in the data of the operator's Secret of a Cluster (OperatorSecret).
func FingerprintKey(own map[string][]byte) []byte { return own[fingerprintKeyKey] }
