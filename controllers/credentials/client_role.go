package credentials

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
)

// clientRole is the clients of one of the collectors' listeners that are not the operator: gNMI subscribers
// of the gNMI server (gnmi_tls.go), dial-in devices of the tunnel server (tunnel_tls.go). Each has
//   - its own CA, in the Secret caSecret (tls.crt, tls.key: the layout cert-manager's CA Issuer reads), which
//     issues the role's client certificates and nothing else;
//   - the listener's Secret listenerSecret: its serving certificate from the collector server CA, and as its
//     ca.crt the role's CA, the only one the listener trusts;
//   - a client certificate of the role, in clientSecret, with the collector server CA as its ca.crt.
type clientRole struct {
	// caName says what the role's CA is for, in its common name (caName).
	caName                                 string
	caSecret, listenerSecret, clientSecret string
	// serverName and dnsNames are the listener's certificate's; clientName the client certificate's common name.
	serverName string
	dnsNames   []string
	clientName string
}

// legacyTrustUntilKey, in a listener's Secret, holds (RFC 3339) when the listener stops trusting the collector
// server CA for clients. A Cluster of a release before roles had one CA, which signed the client certificates
// of every role and is now the collector server CA; a listener moved to its role's CA keeps trusting it until
// the last client certificate of its role that CA signed expires, so that devices and subscribers holding
// one keep working while they are given a new one, as after any renewal. The collector server CA signs no
// client certificate after the move; removing the key ends the grace at once.
const legacyTrustUntilKey = "legacy-trust-until"

// keepClientRole keeps the role's CA, its listener's certificate and trust, and its client certificate, each
// renewed when two thirds of its lifetime have passed or its issuer changed. own is OperatorSecret's data.
// The listener is written before the client certificate it may have to keep trusting is replaced.
func (k *Keeper) keepClientRole(ctx context.Context, cluster *operatorv1alpha1.Cluster, own map[string][]byte, role clientRole) error {
	now, lifetime := k.now(), certificateLifetime(cluster)
	serverCA := pki.KeyPair{CertPEM: own[caCertKey], KeyPEM: own[caKeyKey]}
	roleData, err := k.ensureSecret(ctx, cluster, role.caSecret, func(data map[string][]byte) (bool, error) {
		if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && len(data[corev1.TLSPrivateKeyKey]) > 0 {
			return false, nil
		}
		pair, err := pki.NewCA(caName(cluster, role.caName), now, caLifetime)
		if err != nil {
			return false, err
		}
		data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey] = pair.CertPEM, pair.KeyPEM
		return true, nil
	})
	if err != nil {
		return err
	}
	roleCA := pki.KeyPair{CertPEM: roleData[corev1.TLSCertKey], KeyPEM: roleData[corev1.TLSPrivateKeyKey]}

	legacyUntil, err := k.legacyClientUntil(ctx, cluster, role.clientSecret, serverCA.CertPEM)
	if err != nil {
		return err
	}
	if _, err := k.ensureSecret(ctx, cluster, role.listenerSecret, func(data map[string][]byte) (bool, error) {
		changed := listenerTrust(data, roleCA.CertPEM, serverCA.CertPEM, legacyUntil, now)
		if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && pki.SignedBy(data[corev1.TLSCertKey], serverCA.CertPEM) {
			return changed, nil
		}
		pair, err := pki.NewServer(serverCA, role.serverName, role.dnsNames, nil, now, lifetime)
		if err != nil {
			return false, err
		}
		data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey] = pair.CertPEM, pair.KeyPEM
		return true, nil
	}); err != nil {
		return err
	}
	_, err = k.ensureSecret(ctx, cluster, role.clientSecret, func(data map[string][]byte) (bool, error) {
		changed := trust(data, serverCA.CertPEM)
		if !pki.NeedsRenewal(data[corev1.TLSCertKey], now) && pki.SignedBy(data[corev1.TLSCertKey], roleCA.CertPEM) {
			return changed, nil
		}
		pair, err := pki.NewClient(roleCA, role.clientName, now, lifetime)
		if err != nil {
			return false, err
		}
		data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey] = pair.CertPEM, pair.KeyPEM
		return true, nil
	})
	return err
}

// legacyClientUntil is when the role's client certificate expires if the collector server CA signed it (a
// Cluster of a release before roles), and the zero time otherwise.
func (k *Keeper) legacyClientUntil(ctx context.Context, cluster *operatorv1alpha1.Cluster, clientSecret string, serverCAPEM []byte) (time.Time, error) {
	data, found, err := k.ownSecretData(ctx, cluster, clientSecret)
	if err != nil || !found || !pki.SignedBy(data[corev1.TLSCertKey], serverCAPEM) {
		return time.Time{}, err
	}
	notAfter, _ := pki.NotAfter(data[corev1.TLSCertKey])
	return notAfter, nil
}

// listenerTrust sets the listener's ca.crt: the role's CA, and the collector server CA too until the grace
// for the client certificates it signed before roles ends (legacyTrustUntilKey, moved later by legacyUntil
// when that is later), and tells whether the data changed.
func listenerTrust(data map[string][]byte, roleCAPEM, serverCAPEM []byte, legacyUntil, now time.Time) bool {
	until, _ := time.Parse(time.RFC3339, string(data[legacyTrustUntilKey]))
	if legacyUntil.After(until) {
		until = legacyUntil
	}
	trusted, untilText := roleCAPEM, ""
	if now.Before(until) {
		trusted = append(append([]byte{}, roleCAPEM...), serverCAPEM...)
		untilText = until.UTC().Format(time.RFC3339)
	}
	changed := trust(data, trusted)
	if string(data[legacyTrustUntilKey]) != untilText {
		if untilText == "" {
			delete(data, legacyTrustUntilKey)
		} else {
			data[legacyTrustUntilKey] = []byte(untilText)
		}
		changed = true
	}
	return changed
}
