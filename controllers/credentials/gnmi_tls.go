package credentials

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// GNMITLS keeps the certificates of a Cluster's gNMI server (spec.api.gnmi) while the server runs with TLS
// (the collector API's TLS is on): the server's, for its Service and every collector pod, in
// <cluster>-gnmi-tls, and a client certificate for downstream systems in <cluster>-gnmi-client-tls, both
// issued by the Cluster's CA (from own, OperatorSecret's data), with its ca.crt, and renewed when two thirds of
// their lifetime have passed or the CA changed. The collectors reread the server's files, so a renewal
// restarts nothing; a downstream system must reread its client files. When the server stops, both Secrets
// stay (they hold nothing but certificates of the Cluster's CA) until the Cluster is deleted: the operator is
// granted no delete on Secrets, whose names are the users' too.
func (k *Keeper) GNMITLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, own map[string][]byte) error {
	server, clientSecret := workload.GNMITLSSecretName(cluster), workload.GNMIClientTLSSecretName(cluster)
	if !workload.GNMIServerEnabled(cluster) || !workload.APITLS(cluster) {
		return nil
	}
	now, lifetime := k.now(), certificateLifetime(cluster)
	ca := pki.KeyPair{CertPEM: own[caCertKey], KeyPEM: own[caKeyKey]}
	if _, err := k.ensureSecret(ctx, cluster, server, func(data map[string][]byte) (bool, error) {
		if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && pki.SignedBy(data[corev1.TLSCertKey], ca.CertPEM) {
			return false, nil
		}
		pair, err := pki.NewServer(ca, "gnmic gNMI server "+workload.GNMIServiceName(cluster)+"."+cluster.Namespace,
			workload.GNMIServerDNSNames(cluster), nil, now, lifetime)
		if err != nil {
			return false, err
		}
		data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey], data[caCertKey] = pair.CertPEM, pair.KeyPEM, ca.CertPEM
		return true, nil
	}); err != nil {
		return err
	}
	_, err := k.ensureSecret(ctx, cluster, clientSecret, func(data map[string][]byte) (bool, error) {
		if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && pki.SignedBy(data[corev1.TLSCertKey], ca.CertPEM) {
			return false, nil
		}
		pair, err := pki.NewClient(ca, fmt.Sprintf("gnmi client of %s/%s", cluster.Namespace, cluster.Name), now, lifetime)
		if err != nil {
			return false, err
		}
		data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey], data[caCertKey] = pair.CertPEM, pair.KeyPEM, ca.CertPEM
		return true, nil
	})
	return err
}
