package controllers

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// Keys of the Secret <cluster>-api-ca, which only the operator reads: the Cluster's CA and the operator's
// client certificate.
const (
	caCertKey     = "ca.crt"
	caKeyKey      = "ca.key"
	clientCertKey = "client.crt"
	clientKeyKey  = "client.key"
	// caLifetime is long: renewing the CA re-issues every certificate and restarts every collector.
	caLifetime = 10 * 365 * 24 * time.Hour
	// APITLSChecksumAnnotation on the collector pod template changes when the serving certificate is renewed,
	// which rolls the pods onto it.
	APITLSChecksumAnnotation = "operator.gnmic.dev/api-tls-checksum"
)

// apiTLS is the operator's side of a Cluster's collector TLS.
type apiTLS struct {
	client   *tls.Config
	checksum string
}

func caSecretName(cluster *operatorv1alpha1.Cluster) string { return cluster.Name + "-api-ca" }

// ensureAPITLS keeps, for a Cluster with spec.api.tls, a CA and the operator's client certificate in
// <cluster>-api-ca, and the collectors' serving certificate in <cluster>-api-tls, renewing each when two
// thirds of its lifetime have passed. It returns nil for a Cluster without TLS.
func (r *ClusterReconciler) ensureAPITLS(ctx context.Context, cluster *operatorv1alpha1.Cluster) (*apiTLS, error) {
	if cluster.Spec.API.TLS == nil {
		r.clientTLS.forget(client.ObjectKeyFromObject(cluster))
		return nil, nil
	}
	lifetime := 2160 * time.Hour
	if l := cluster.Spec.API.TLS.CertificateLifetime; l != nil {
		lifetime = l.Duration
	}
	now := r.now()

	caSecret, err := r.ensureSecret(ctx, cluster, caSecretName(cluster), func(data map[string][]byte) (bool, error) {
		changed := false
		if pki.NeedsRenewal(data[caCertKey], now) || len(data[caKeyKey]) == 0 {
			ca, err := pki.NewCA(fmt.Sprintf("gnmic-operator %s/%s collector CA", cluster.Namespace, cluster.Name), now, caLifetime)
			if err != nil {
				return false, err
			}
			data[caCertKey], data[caKeyKey] = ca.CertPEM, ca.KeyPEM
			changed = true
		}
		if pki.NeedsRenewal(data[clientCertKey], now) || !signedBy(data[clientCertKey], data[caCertKey]) {
			ca := pki.KeyPair{CertPEM: data[caCertKey], KeyPEM: data[caKeyKey]}
			pair, err := pki.NewClient(ca, "gnmic-operator", now, lifetime)
			if err != nil {
				return false, err
			}
			data[clientCertKey], data[clientKeyKey] = pair.CertPEM, pair.KeyPEM
			changed = true
		}
		return changed, nil
	})
	if err != nil {
		return nil, err
	}
	ca := pki.KeyPair{CertPEM: caSecret.Data[caCertKey], KeyPEM: caSecret.Data[caKeyKey]}
	serving, err := r.ensureSecret(ctx, cluster, workload.APITLSSecretName(cluster), func(data map[string][]byte) (bool, error) {
		if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && signedBy(data[corev1.TLSCertKey], ca.CertPEM) {
			return false, nil
		}
		svc := fmt.Sprintf("%s.%s.svc", cluster.Name, cluster.Namespace)
		pair, err := pki.NewServer(ca, "gnmic collector "+svc, []string{"*." + svc, "*." + svc + ".cluster.local", svc}, nil, now, lifetime)
		if err != nil {
			return false, err
		}
		data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey], data[caCertKey] = pair.CertPEM, pair.KeyPEM, ca.CertPEM
		return true, nil
	})
	if err != nil {
		return nil, err
	}

	clientConfig, err := r.clientTLS.config(client.ObjectKeyFromObject(cluster), ca.CertPEM, caSecret.Data[clientCertKey], caSecret.Data[clientKeyKey])
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(serving.Data[corev1.TLSCertKey])
	return &apiTLS{client: clientConfig, checksum: hex.EncodeToString(sum[:8])}, nil
}

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

// ensureSecret reads (from the API server: Secrets are not cached) or creates an owned Secret and lets
// change fill or renew its data; it writes only when change reports a change.
func (r *ClusterReconciler) ensureSecret(ctx context.Context, cluster *operatorv1alpha1.Cluster, name string,
	change func(map[string][]byte) (bool, error)) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, secret)
	exists := err == nil
	switch {
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster.Namespace,
			Labels: workload.Labels(cluster)}, Type: corev1.SecretTypeOpaque}
	case err != nil:
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	changed, err := change(secret.Data)
	if err != nil {
		return nil, fmt.Errorf("issue certificate for secret %s: %w", name, err)
	}
	if !changed {
		return secret, nil
	}
	if err := controllerutil.SetControllerReference(cluster, secret, r.Scheme); err != nil {
		return nil, fmt.Errorf("own secret %s: %w", name, err)
	}
	if exists {
		log.FromContext(ctx).Info("renewing certificate", "secret", name)
		err = r.Update(ctx, secret)
	} else {
		log.FromContext(ctx).Info("issuing certificate", "secret", name)
		err = r.Create(ctx, secret)
	}
	if err != nil {
		return nil, fmt.Errorf("write secret %s: %w", name, err)
	}
	return secret, nil
}

// signedBy is true when certPEM verifies against the CA in caPEM (a renewed CA invalidates what it signed).
func signedBy(certPEM, caPEM []byte) bool {
	cert, err := pki.ParseCert(certPEM)
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
