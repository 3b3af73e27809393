package credentials

import (
	"bytes"
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

// Keys of the Secret <cluster>-api-ca, which only the operator reads (docs/security.md, "Certificate roles"):
//   - ca.crt, ca.key: the collector server CA, which issues every serving certificate of the collectors (REST
//     API, gNMI server, tunnel server) and nothing else. It is the one CA of the releases before roles: kept, so
//     that every client that verifies the collectors with it keeps doing so through the upgrade.
//   - client-ca.crt, client-ca.key: the operator client CA, the only one the collectors' REST API trusts.
//   - client.crt, client.key: the operator's client certificate, from the operator client CA.
//   - previous-client.crt, previous-client.key: the client certificate client.crt replaced when its issuer
//     changed (the upgrade from one CA, a renewed operator client CA). The operator presents both, and each
//     collector's TLS handshake picks the one its ca-file names (crypto/tls matches the CAs a server asks
//     for), so that collectors not yet rolled onto the new trust keep being reached. It goes when two thirds
//     of its lifetime have passed, as it would have been renewed then.
//   - fingerprint.key (fingerprint.go).
const (
	caCertKey             = "ca.crt"
	caKeyKey              = "ca.key"
	clientCACertKey       = "client-ca.crt"
	clientCAKeyKey        = "client-ca.key"
	clientCertKey         = "client.crt"
	clientKeyKey          = "client.key"
	previousClientCertKey = "previous-client.crt"
	previousClientKeyKey  = "previous-client.key"
	// caLifetime is long: renewing a CA re-issues every certificate of its role.
	caLifetime = 10 * 365 * 24 * time.Hour
	// defaultCertificateLifetime is spec.api.tls.certificateLifetime's default.
	defaultCertificateLifetime = 2160 * time.Hour
	// APITLSChecksumAnnotation on the collector pod template changes when the serving certificate is renewed
	// or the CA the REST API trusts changes, which rolls the pods onto them: gNMIc reads its api-server files
	// only at start.
	APITLSChecksumAnnotation = "operator.gnmic.dev/api-tls-checksum"
)

// APITLS is the operator's side of a Cluster's collector TLS.
type APITLS struct {
	// Client is the operator's client configuration: it trusts the collector server CA only, and presents the
	// operator's client certificate (and the previous one while it is kept). It stays the same value while
	// they do, so that the dialer's transports are reused.
	Client *tls.Config
	// Checksum identifies the collectors' serving certificate and the client CA their REST API trusts: the
	// pod template carries it (APITLSChecksumAnnotation), so that a change rolls the pods onto it.
	Checksum string
}

func caSecretName(cluster *operatorv1alpha1.Cluster) string { return cluster.Name + "-api-ca" }

// OperatorSecret keeps the Cluster's <cluster>-api-ca Secret and returns its data: the fingerprint key
// of every Cluster and, for a Cluster with TLS on its collector API (every Cluster but those whose
// spec.api.insecure opts out), the collector server CA, the operator client CA and the operator's client
// certificate, each renewed when two thirds of its lifetime have passed. Everything it needs is written at once.
func (k *Keeper) OperatorSecret(ctx context.Context, cluster *operatorv1alpha1.Cluster) (map[string][]byte, error) {
	now, lifetime := k.now(), certificateLifetime(cluster)
	return k.ensureSecret(ctx, cluster, caSecretName(cluster), func(data map[string][]byte) (bool, error) {
		changed, err := fillFingerprintKey(data)
		if err != nil || !workload.APITLS(cluster) {
			return changed, err
		}
		for _, ca := range []struct{ cert, key, role string }{
			{caCertKey, caKeyKey, "collector CA"},
			{clientCACertKey, clientCAKeyKey, "operator client CA"},
		} {
			if !pki.NeedsRenewal(data[ca.cert], now) && len(data[ca.key]) > 0 {
				continue
			}
			pair, err := pki.NewCA(caName(cluster, ca.role), now, caLifetime)
			if err != nil {
				return false, err
			}
			data[ca.cert], data[ca.key] = pair.CertPEM, pair.KeyPEM
			changed = true
		}
		if current := data[clientCertKey]; pki.NeedsRenewal(current, now) || !pki.SignedBy(current, data[clientCACertKey]) {
			if !pki.NeedsRenewal(current, now) {
				// Its issuer changed: collectors that still trust that issuer are reached with it until they roll.
				data[previousClientCertKey], data[previousClientKeyKey] = current, data[clientKeyKey]
			}
			ca := pki.KeyPair{CertPEM: data[clientCACertKey], KeyPEM: data[clientCAKeyKey]}
			pair, err := pki.NewClient(ca, "gnmic-operator", now, lifetime)
			if err != nil {
				return false, err
			}
			data[clientCertKey], data[clientKeyKey] = pair.CertPEM, pair.KeyPEM
			changed = true
		}
		if _, kept := data[previousClientCertKey]; kept && pki.NeedsRenewal(data[previousClientCertKey], now) {
			delete(data, previousClientCertKey)
			delete(data, previousClientKeyKey)
			changed = true
		}
		return changed, nil
	})
}

// caName is the common name of one of the Cluster's CAs. Each role's CA has its own name: a TLS server names
// the CAs it accepts by subject, and a client picks its certificate by them.
func caName(cluster *operatorv1alpha1.Cluster, role string) string {
	return fmt.Sprintf("gnmic-operator %s/%s %s", cluster.Namespace, cluster.Name, role)
}

// APITLS keeps, for a Cluster with TLS on its collector API, the collectors' serving certificate in
// <cluster>-api-tls, issued by the collector server CA of the operator's Secret (OperatorSecret, whose data is
// own) and renewed when two thirds of its lifetime have passed, with the operator client CA as its ca.crt,
// the only CA the REST API trusts; and returns the operator's client side. It returns nil for a Cluster without
// TLS.
func (k *Keeper) APITLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, own map[string][]byte) (*APITLS, error) {
	if !workload.APITLS(cluster) {
		k.clientTLS.forget(client.ObjectKeyFromObject(cluster))
		return nil, nil
	}
	now, lifetime := k.now(), certificateLifetime(cluster)
	ca := pki.KeyPair{CertPEM: own[caCertKey], KeyPEM: own[caKeyKey]}
	serving, err := k.ensureSecret(ctx, cluster, workload.APITLSSecretName(cluster), func(data map[string][]byte) (bool, error) {
		changed := trust(data, own[clientCACertKey])
		if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && pki.SignedBy(data[corev1.TLSCertKey], ca.CertPEM) {
			return changed, nil
		}
		svc := fmt.Sprintf("%s.%s.svc", cluster.Name, cluster.Namespace)
		pair, err := pki.NewServer(ca, "gnmic collector "+svc, []string{"*." + svc, "*." + svc + ".cluster.local", svc}, nil, now, lifetime)
		if err != nil {
			return false, err
		}
		data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey] = pair.CertPEM, pair.KeyPEM
		return true, nil
	})
	if err != nil {
		return nil, err
	}

	presented := []pki.KeyPair{{CertPEM: own[clientCertKey], KeyPEM: own[clientKeyKey]}}
	if previous := own[previousClientCertKey]; len(previous) > 0 {
		presented = append(presented, pki.KeyPair{CertPEM: previous, KeyPEM: own[previousClientKeyKey]})
	}
	clientConfig, err := k.clientTLS.config(client.ObjectKeyFromObject(cluster), ca.CertPEM, presented)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write(serving[corev1.TLSCertKey])
	h.Write([]byte{0})
	h.Write(serving[caCertKey])
	return &APITLS{Client: clientConfig, Checksum: hex.EncodeToString(h.Sum(nil)[:8])}, nil
}

// trust sets the ca.crt of a listener's Secret, the CAs whose client certificates it accepts, and tells
// whether it changed.
func trust(data map[string][]byte, caPEM []byte) bool {
	if bytes.Equal(data[caCertKey], caPEM) {
		return false
	}
	data[caCertKey] = caPEM
	return true
}

// certificateLifetime is the lifetime of the serving and client certificates.
func certificateLifetime(cluster *operatorv1alpha1.Cluster) time.Duration {
	if t := cluster.Spec.API.TLS; t != nil && t.CertificateLifetime != nil {
		return t.CertificateLifetime.Duration
	}
	return defaultCertificateLifetime
}
