package credentials

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// TunnelTLS keeps the certificates of a Cluster's gRPC tunnel server (spec.grpcTunnel) while it runs with TLS
// (the collector API's TLS is on), as GNMITLS does for the gNMI server: the server's, for its Service and every
// collector pod, in <cluster>-tunnel-tls, and a device certificate in <cluster>-tunnel-client-tls, both issued
// by the Cluster's CA (from own) with its ca.crt, renewed when two thirds of their lifetime have passed or the
// CA changed. The Secrets stay when the tunnel stops and go with the Cluster.
func (k *Keeper) TunnelTLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, own map[string][]byte) error {
	if !workload.TunnelEnabled(cluster) || !workload.APITLS(cluster) {
		return nil
	}
	now, lifetime := k.now(), certificateLifetime(cluster)
	ca := pki.KeyPair{CertPEM: own[caCertKey], KeyPEM: own[caKeyKey]}
	keep := func(name string, issue func() (pki.KeyPair, error)) error {
		_, err := k.ensureSecret(ctx, cluster, name, func(data map[string][]byte) (bool, error) {
			if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && pki.SignedBy(data[corev1.TLSCertKey], ca.CertPEM) {
				return false, nil
			}
			pair, err := issue()
			if err != nil {
				return false, err
			}
			data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey], data[caCertKey] = pair.CertPEM, pair.KeyPEM, ca.CertPEM
			return true, nil
		})
		return err
	}
	if err := keep(workload.TunnelTLSSecretName(cluster), func() (pki.KeyPair, error) {
		return pki.NewServer(ca, "gnmic tunnel server "+workload.TunnelServiceName(cluster)+"."+cluster.Namespace,
			workload.TunnelServerDNSNames(cluster), nil, now, lifetime)
	}); err != nil {
		return err
	}
	return keep(workload.TunnelClientTLSSecretName(cluster), func() (pki.KeyPair, error) {
		return pki.NewClient(ca, fmt.Sprintf("dial-in device of %s/%s", cluster.Namespace, cluster.Name), now, lifetime)
	})
}
