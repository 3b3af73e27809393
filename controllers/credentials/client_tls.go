package credentials

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/internal/pki"
)

// clientTLSCache gives each Cluster the same *tls.Config for as long as its CA and client certificates stay the
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

// config is the Cluster's client configuration, trusting the CA of rootsPEM and presenting the key pairs in
// order (crypto/tls presents the first one issued by a CA the server asks for, else the first), built only
// when they differ from those of the configuration it returned last.
func (c *clientTLSCache) config(cluster types.NamespacedName, rootsPEM []byte, presented []pki.KeyPair) (*tls.Config, error) {
	parts := [][]byte{rootsPEM}
	for _, p := range presented {
		parts = append(parts, p.CertPEM, p.KeyPEM)
	}
	fingerprint := fingerprintOf(parts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byCluster == nil {
		c.byCluster = map[types.NamespacedName]clientTLSEntry{}
	}
	if e, ok := c.byCluster[cluster]; ok && e.fingerprint == fingerprint {
		return e.config, nil
	}
	certs := make([]tls.Certificate, 0, len(presented))
	for _, p := range presented {
		cert, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
		if err != nil {
			return nil, fmt.Errorf("load operator client certificate: %w", err)
		}
		certs = append(certs, cert)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(rootsPEM) {
		return nil, fmt.Errorf("load the collector CA of cluster %s: no certificate in %s", cluster, caCertKey)
	}
	config := &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}
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
