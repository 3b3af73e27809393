package controllers

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
// client certificate (with TLS on the collector API), and the fingerprint key (cluster_fingerprint.go).
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

// apiTLS is the operator's side of a Cluster's collector TLS.
type apiTLS struct {
	client   *tls.Config
	checksum string
}

func caSecretName(cluster *operatorv1alpha1.Cluster) string { return cluster.Name + "-api-ca" }

// ensureOperatorSecret keeps the Cluster's <cluster>-api-ca Secret and returns its data: the fingerprint key
// of every Cluster and, for a Cluster with TLS on its collector API (every Cluster but those whose
// spec.api.insecure opts out), a CA and the operator's client certificate, each renewed when two thirds of
// its lifetime have passed. Everything it needs is written at once.
func (r *ClusterReconciler) ensureOperatorSecret(ctx context.Context, cluster *operatorv1alpha1.Cluster) (map[string][]byte, error) {
	now, lifetime := r.now(), certificateLifetime(cluster)
	return r.ensureSecret(ctx, cluster, caSecretName(cluster), func(data map[string][]byte) (bool, error) {
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
}

// ensureAPITLS keeps, for a Cluster with TLS on its collector API, the collectors' serving certificate in
// <cluster>-api-tls, signed by the CA of the operator's Secret (ensureOperatorSecret, whose data is own) and
// renewed when two thirds of its lifetime have passed, and returns the operator's client side. It returns nil
// for a Cluster without TLS.
func (r *ClusterReconciler) ensureAPITLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, own map[string][]byte) (*apiTLS, error) {
	if !workload.APITLS(cluster) {
		r.clientTLS.forget(client.ObjectKeyFromObject(cluster))
		return nil, nil
	}
	now, lifetime := r.now(), certificateLifetime(cluster)
	ca := pki.KeyPair{CertPEM: own[caCertKey], KeyPEM: own[caKeyKey]}
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

	clientConfig, err := r.clientTLS.config(client.ObjectKeyFromObject(cluster), ca.CertPEM, own[clientCertKey], own[clientKeyKey])
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(serving[corev1.TLSCertKey])
	return &apiTLS{client: clientConfig, checksum: hex.EncodeToString(sum[:8])}, nil
}

// certificateLifetime is the lifetime of the serving and client certificates.
func certificateLifetime(cluster *operatorv1alpha1.Cluster) time.Duration {
	if t := cluster.Spec.API.TLS; t != nil && t.CertificateLifetime != nil {
		return t.CertificateLifetime.Duration
	}
	return defaultCertificateLifetime
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

// ensureSecret keeps an owned Secret whose data change fills or renews, and returns its data, which callers
// must not modify. change first sees the data as the Secret content cache holds it (secret_cache.go): while
// it reports no change, which is every reconcile but a Secret's first and its renewals, the API server is not
// asked at all. Otherwise the Secret is read from the API server, changed again and written, and the written
// data is remembered at its new resourceVersion.
func (r *ClusterReconciler) ensureSecret(ctx context.Context, cluster *operatorv1alpha1.Cluster, name string,
	change func(map[string][]byte) (bool, error)) (map[string][]byte, error) {
	cached, found, err := r.ownSecretData(ctx, cluster.Namespace, name)
	if err != nil {
		return nil, err
	}
	if found {
		changed, err := change(maps.Clone(cached))
		if err != nil {
			return nil, fmt.Errorf("fill secret %s: %w", name, err)
		}
		if !changed {
			return cached, nil
		}
	}
	secret := &corev1.Secret{}
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, secret)
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
		return nil, fmt.Errorf("fill secret %s: %w", name, err)
	}
	if !changed {
		return secret.Data, nil
	}
	if err := controllerutil.SetControllerReference(cluster, secret, r.Scheme); err != nil {
		return nil, fmt.Errorf("own secret %s: %w", name, err)
	}
	// The label marks the Secret as the operator's: config/rbac/operator_writes_policy.yaml lets it write no other.
	secret.Labels = mergedInto(secret.Labels, workload.Labels(cluster))
	if exists {
		log.FromContext(ctx).Info("renewing", "secret", name)
		err = r.Update(ctx, secret)
	} else {
		log.FromContext(ctx).Info("creating", "secret", name)
		err = r.Create(ctx, secret)
	}
	if err != nil {
		return nil, fmt.Errorf("write secret %s: %w", name, err)
	}
	if reader, ok := r.APIReader.(*secretReader); ok {
		reader.contents.remember(client.ObjectKeyFromObject(secret), secret.ResourceVersion, secret.Data)
	}
	return secret.Data, nil
}

// ownSecretData is the data of one of the Cluster's own Secrets through the Secret content cache, when
// SetupWithManager installed one; found is false when the cache has none (or there is no cache), and the
// caller then asks the API server.
func (r *ClusterReconciler) ownSecretData(ctx context.Context, namespace, name string) (data map[string][]byte, found bool, err error) {
	reader, ok := r.APIReader.(*secretReader)
	if !ok {
		return nil, false, nil
	}
	secrets, err := reader.secrets(ctx, namespace, []string{name})
	if err != nil {
		return nil, false, err
	}
	data, found = secrets[name]
	return data, found, nil
}

// setAPISecuredCondition says whether the Cluster's collector API is protected, and warns with an event when
// the Cluster opts out of TLS: once, when the condition starts to say so or its reason changes.
func (r *ClusterReconciler) setAPISecuredCondition(cluster *operatorv1alpha1.Cluster) {
	c := metav1.Condition{Type: operatorv1alpha1.ConditionAPISecured, Status: metav1.ConditionTrue,
		Reason:             operatorv1alpha1.ReasonMutualTLS,
		Message:            "collectors serve their REST API over TLS and accept only the operator's client certificate",
		ObservedGeneration: cluster.Generation}
	insecure := cluster.Spec.API.Insecure
	if insecure != nil {
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonOptedOut
		c.Message = truncate("spec.api.insecure: "+insecure.Reason, maxConditionMessage)
	}
	was := meta.FindStatusCondition(cluster.Status.Conditions, operatorv1alpha1.ConditionAPISecured)
	if insecure != nil && (was == nil || was.Status != c.Status || was.Message != c.Message) {
		r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventAPIInsecure,
			"the collectors' REST API runs without TLS: target passwords cross the pod network in clear, and any pod "+
				"that reaches the API can push configuration (spec.api.insecure.reason: %s)", insecure.Reason)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
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
