package credentials

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// clientTLSCache gives each Cluster the same *tls.Config for as long as its CA and client certificate stay the
// same: the dialer keeps a collector's connections per configuration, so a configuration built anew on every
// reconcile would cost a TLS handshake with every collector each time.
type clientTLSCache struct {
	mu        sync.Mutex
	byCluster map[types.NamespacedName]clientTLSEntry
}

type clientTLSEntry struct {
	fingerprint string
	config      *tls.Config
}

// config is the Cluster's client configuration for the CA and the client key pair, built only when they
// differ from those of the configuration it returned last.
func (c *clientTLSCache) config(cluster types.NamespacedName, caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	fingerprint := fingerprintOf(caPEM, certPEM, keyPEM)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byCluster == nil {
		c.byCluster = map[types.NamespacedName]clientTLSEntry{}
	}
	if e, ok := c.byCluster[cluster]; ok && e.fingerprint == fingerprint {
		return e.config, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load operator client certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("load the CA of cluster %s: no certificate in %s", cluster, caCertKey)
	}
	config := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	c.byCluster[cluster] = clientTLSEntry{fingerprint: fingerprint, config: config}
	return config, nil
}

// forget drops the configuration of a Cluster that has no TLS anymore.
func (c *clientTLSCache) forget(cluster types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byCluster, cluster)
}

// fingerprintOf identifies certificate material: the SHA-256 of each part, in order.
func fingerprintOf(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		sum := sha256.Sum256(p)
		h.Write(sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
