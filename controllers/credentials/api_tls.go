package credentials

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// Keys of the Secret <cluster>-api-ca, which only the operator reads: the Cluster's CA and the operator's
// client certificate (with TLS on the collector API), and the fingerprint key (fingerprint.go).
const (
	caCertKey     = "ca.crt"
	caKeyKey      = "ca.key"
	clientCertKey = "client.crt"
	clientKeyKey  = "client.key"
	// caLifetime is long: renewing the CA re-issues every certificate and restarts every collector.
	caLifetime = 10 * 365 * 24 * time.Hour
	// defaultCertificateLifetime is spec.api.tls.certificateLifetime's default.
	defaultCertificateLifetime = 2160 * time.Hour
	// APITLSChecksumAnnotation on the collector pod template changes when the serving certificate is renewed,
	// which rolls the pods onto it.
	APITLSChecksumAnnotation = "operator.gnmic.dev/api-tls-checksum"
)

// APITLS is the operator's side of a Cluster's collector TLS.
type APITLS struct {
	// Client is the operator's client configuration: the Cluster's CA and the operator's client certificate.
	// It stays the same value while they do, so that the dialer's transports are reused.
	Client *tls.Config
	// Checksum identifies the collectors' serving certificate: the pod template carries it
	// (APITLSChecksumAnnotation), so that a renewal rolls the pods onto the new one.
	Checksum string
}

func caSecretName(cluster *operatorv1alpha1.Cluster) string { return cluster.Name + "-api-ca" }

// OperatorSecret keeps the Cluster's <cluster>-api-ca Secret and returns its data: the fingerprint key
// of every Cluster and, for a Cluster with TLS on its collector API (every Cluster but those whose
// spec.api.insecure opts out), a CA and the operator's client certificate, each renewed when two thirds of
// its lifetime have passed. Everything it needs is written at once.
func (k *Keeper) OperatorSecret(ctx context.Context, cluster *operatorv1alpha1.Cluster) (map[string][]byte, error) {
	now, lifetime := k.now(), certificateLifetime(cluster)
	return k.ensureSecret(ctx, cluster, caSecretName(cluster), func(data map[string][]byte) (bool, error) {
		changed, err := fillFingerprintKey(data)
		if err != nil || !workload.APITLS(cluster) {
			return changed, err
		}
		if pki.NeedsRenewal(data[caCertKey], now) || len(data[caKeyKey]) == 0 {
			ca, err := pki.NewCA(fmt.Sprintf("gnmic-operator %s/%s collector CA", cluster.Namespace, cluster.Name), now, caLifetime)
			if err != nil {
				return false, err
			}
			data[caCertKey], data[caKeyKey] = ca.CertPEM, ca.KeyPEM
			changed = true
		}
		if pki.NeedsRenewal(data[clientCertKey], now) || !pki.SignedBy(data[clientCertKey], data[caCertKey]) {
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
}

// APITLS keeps, for a Cluster with TLS on its collector API, the collectors' serving certificate in
// <cluster>-api-tls, signed by the CA of the operator's Secret (OperatorSecret, whose data is own) and
// renewed when two thirds of its lifetime have passed, and returns the operator's client side. It returns nil
// for a Cluster without TLS.
func (k *Keeper) APITLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, own map[string][]byte) (*APITLS, error) {
	if !workload.APITLS(cluster) {
		k.clientTLS.forget(client.ObjectKeyFromObject(cluster))
		return nil, nil
	}
	now, lifetime := k.now(), certificateLifetime(cluster)
	ca := pki.KeyPair{CertPEM: own[caCertKey], KeyPEM: own[caKeyKey]}
	serving, err := k.ensureSecret(ctx, cluster, workload.APITLSSecretName(cluster), func(data map[string][]byte) (bool, error) {
		if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && pki.SignedBy(data[corev1.TLSCertKey], ca.CertPEM) {
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

	clientConfig, err := k.clientTLS.config(client.ObjectKeyFromObject(cluster), ca.CertPEM, own[clientCertKey], own[clientKeyKey])
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(serving[corev1.TLSCertKey])
	return &APITLS{Client: clientConfig, Checksum: hex.EncodeToString(sum[:8])}, nil
}

// certificateLifetime is the lifetime of the serving and client certificates.
func certificateLifetime(cluster *operatorv1alpha1.Cluster) time.Duration {
	if t := cluster.Spec.API.TLS; t != nil && t.CertificateLifetime != nil {
		return t.CertificateLifetime.Duration
	}
	return defaultCertificateLifetime
}
