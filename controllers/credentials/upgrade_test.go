package credentials_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// oneCALayout is what the release before certificate roles wrote for a Cluster: one CA in <cluster>-api-ca
// that signed the operator's client certificate, every serving certificate and the device and subscriber
// certificates, and was every listener's ca.crt. It was issued at issuedAt, with 90-day certificates.
func oneCALayout(t *testing.T, cluster *operatorv1alpha1.Cluster, issuedAt time.Time) []client.Object {
	t.Helper()
	const lifetime = 2160 * time.Hour
	ca, err := pki.NewCA(fmt.Sprintf("gnmic-operator %s/%s collector CA", cluster.Namespace, cluster.Name), issuedAt, 10*365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	must := func(p pki.KeyPair, err error) pki.KeyPair {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	operatorClient := must(pki.NewClient(ca, "gnmic-operator", issuedAt, lifetime))
	svc := fmt.Sprintf("%s.%s.svc", cluster.Name, cluster.Namespace)
	files := func(p pki.KeyPair) map[string][]byte {
		return map[string][]byte{"tls.crt": p.CertPEM, "tls.key": p.KeyPEM, "ca.crt": ca.CertPEM}
	}
	data := map[string]map[string][]byte{
		cluster.Name + "-api-ca": {"ca.crt": ca.CertPEM, "ca.key": ca.KeyPEM, "client.crt": operatorClient.CertPEM,
			"client.key": operatorClient.KeyPEM, "fingerprint.key": bytes.Repeat([]byte{7}, 32)},
		workload.APITLSSecretName(cluster): files(must(pki.NewServer(ca, "gnmic collector "+svc,
			[]string{"*." + svc, "*." + svc + ".cluster.local", svc}, nil, issuedAt, lifetime))),
		workload.GNMITLSSecretName(cluster): files(must(pki.NewServer(ca, "gnmi server",
			workload.GNMIServerDNSNames(cluster), nil, issuedAt, lifetime))),
		workload.GNMIClientTLSSecretName(cluster): files(must(pki.NewClient(ca, "gnmi client", issuedAt, lifetime))),
		workload.TunnelTLSSecretName(cluster): files(must(pki.NewServer(ca, "tunnel server",
			workload.TunnelServerDNSNames(cluster), nil, issuedAt, lifetime))),
		workload.TunnelClientTLSSecretName(cluster): files(must(pki.NewClient(ca, "dial-in device", issuedAt, lifetime))),
	}
	s := newScheme(t)
	var objects []client.Object
	for name, d := range data {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster.Namespace,
			Labels: workload.Labels(cluster), Annotations: owned.OwnerAnnotations("Cluster", cluster.Name)}, Data: d}
		if err := controllerutil.SetControllerReference(cluster, secret, s); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, secret)
	}
	return objects
}

func secretsOf(t *testing.T, objects []client.Object) map[string]map[string][]byte {
	t.Helper()
	out := map[string]map[string][]byte{}
	for _, o := range objects {
		out[o.GetName()] = o.(*corev1.Secret).Data
	}
	return out
}

// restListener is the REST API a collector started with that <cluster>-api-tls serves.
func restListener(t *testing.T, apiTLS map[string][]byte) *tls.Config {
	t.Helper()
	cfg, err := fakecollector.MutualTLS(apiTLS["tls.crt"], apiTLS["tls.key"], apiTLS["ca.crt"])
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func presenting(t *testing.T, data map[string][]byte) *tls.Config {
	return presentingAlways([]tls.Certificate{pair(t, data)})
}

func TestAClusterOfOneCAMovesToRolesWithoutLosingItsCollectors(t *testing.T) {
	ctx := context.Background()
	cluster := listenedCluster()
	issuedAt := time.Now().Add(-10 * 24 * time.Hour)
	before := oneCALayout(t, cluster, issuedAt)
	old := secretsOf(t, before)
	k, c := newKeeper(t, before...)
	api, err := keep(ctx, k, cluster)
	if err != nil {
		t.Fatal(err)
	}
	is := render(t, c, cluster, api)
	apiCA, apiTLS := cluster.Name+"-api-ca", workload.APITLSSecretName(cluster)

	t.Run("keeps the CA as the collector server CA and every serving certificate", func(t *testing.T) {
		if !bytes.Equal(is.secrets[apiCA]["ca.crt"], old[apiCA]["ca.crt"]) {
			t.Fatal("the CA changed: devices and subscribers verifying the collectors with it would fail")
		}
		for _, name := range []string{apiTLS, workload.GNMITLSSecretName(cluster), workload.TunnelTLSSecretName(cluster)} {
			if !bytes.Equal(is.secrets[name]["tls.crt"], old[name]["tls.crt"]) {
				t.Errorf("%s: the serving certificate was re-issued", name)
			}
		}
		for _, name := range []string{workload.GNMICASecretName(cluster), workload.TunnelCASecretName(cluster)} {
			if len(is.secrets[name]["tls.crt"]) == 0 || len(is.secrets[name]["tls.key"]) == 0 {
				t.Errorf("%s was not created", name)
			}
		}
		if bytes.Equal(is.secrets[apiTLS]["ca.crt"], old[apiTLS]["ca.crt"]) {
			t.Fatal("the REST API still trusts the one CA")
		}
		if api.Checksum == "" {
			t.Fatal("no checksum to roll the collectors with")
		}
	})

	t.Run("reaches collectors not yet rolled with the previous client certificate, and rolled ones with the new", func(t *testing.T) {
		operator := api.Client.Clone()
		operator.ServerName = workload.PodHost(cluster, 0)
		if err := handshake(restListener(t, old[apiTLS]), operator); err != nil {
			t.Fatalf("a collector of the one-CA layout refuses the operator: %v", err)
		}
		if err := handshake(is.listeners["REST API"], operator); err != nil {
			t.Fatalf("a rolled collector refuses the operator: %v", err)
		}
		if !bytes.Equal(is.secrets[apiCA]["previous-client.crt"], old[apiCA]["client.crt"]) {
			t.Fatal("the previous client certificate is not kept")
		}
	})

	oldDevice, oldSubscriber := old[workload.TunnelClientTLSSecretName(cluster)], old[workload.GNMIClientTLSSecretName(cluster)]
	t.Run("lets devices and subscribers holding a certificate of the one CA in until it expires, and nowhere else", func(t *testing.T) {
		if err := handshake(is.listeners["tunnel server"], presenting(t, oldDevice)); err != nil {
			t.Errorf("the tunnel server refuses a device of the one-CA layout during the grace: %v", err)
		}
		if err := handshake(is.listeners["gNMI server"], presenting(t, oldSubscriber)); err != nil {
			t.Errorf("the gNMI server refuses a subscriber of the one-CA layout during the grace: %v", err)
		}
		for name, id := range map[string]map[string][]byte{"device": oldDevice, "subscriber": oldSubscriber} {
			if err := handshake(is.listeners["REST API"], presenting(t, id)); err == nil {
				t.Errorf("a rolled collector's REST API accepts the %s certificate of the one-CA layout", name)
			}
		}
		notAfter, _ := pki.NotAfter(oldDevice["tls.crt"])
		got := string(is.secrets[workload.TunnelTLSSecretName(cluster)]["legacy-trust-until"])
		if want := notAfter.UTC().Format(time.RFC3339); got != want {
			t.Errorf("legacy-trust-until = %q, want the device certificate's expiry %q", got, want)
		}
		// The new certificates work at once, each only at its listener (TestEachListenerAcceptsOnlyItsRole).
		if err := handshake(is.listeners["tunnel server"], presenting(t, is.secrets[workload.TunnelClientTLSSecretName(cluster)])); err != nil {
			t.Errorf("the tunnel server refuses the new device certificate: %v", err)
		}
		if err := handshake(is.listeners["gNMI server"], presenting(t, is.secrets[workload.TunnelClientTLSSecretName(cluster)])); err == nil {
			t.Error("the gNMI server accepts the new device certificate")
		}
	})

	t.Run("ends the grace when the key is removed", func(t *testing.T) {
		for _, name := range []string{workload.TunnelTLSSecretName(cluster), workload.GNMITLSSecretName(cluster)} {
			var s corev1.Secret
			if err := c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, &s); err != nil {
				t.Fatal(err)
			}
			delete(s.Data, "legacy-trust-until")
			if err := c.Update(ctx, &s); err != nil {
				t.Fatal(err)
			}
		}
		// A new Keeper: the content cache of this fake client does not see writes by others.
		k2 := &credentials.Keeper{Client: c, Reader: credentials.NewSecretReader(c, c), Scheme: k.Scheme}
		api, err := keep(ctx, k2, cluster)
		if err != nil {
			t.Fatal(err)
		}
		after := render(t, c, cluster, api)
		if err := handshake(after.listeners["tunnel server"], presenting(t, oldDevice)); err == nil {
			t.Error("the tunnel server still accepts a device of the one-CA layout")
		}
		if err := handshake(after.listeners["gNMI server"], presenting(t, oldSubscriber)); err == nil {
			t.Error("the gNMI server still accepts a subscriber of the one-CA layout")
		}
		if err := handshake(after.listeners["tunnel server"], presenting(t, after.secrets[workload.TunnelClientTLSSecretName(cluster)])); err != nil {
			t.Errorf("the tunnel server refuses the new device certificate: %v", err)
		}
	})
}

func TestTheGraceAndThePreviousClientCertificateEndOnTheirOwn(t *testing.T) {
	ctx := context.Background()
	cluster := listenedCluster()
	issuedAt := time.Now().Add(-10 * 24 * time.Hour)
	before := oneCALayout(t, cluster, issuedAt)
	old := secretsOf(t, before)
	_, c := newKeeper(t, before...)
	keepAt := func(now time.Time) map[string]map[string][]byte {
		t.Helper()
		k := &credentials.Keeper{Client: c, Reader: credentials.NewSecretReader(c, c), Scheme: newScheme(t), Now: func() time.Time { return now }}
		if _, err := keep(ctx, k, cluster); err != nil {
			t.Fatal(err)
		}
		var list corev1.SecretList
		if err := c.List(ctx, &list, client.InNamespace(cluster.Namespace)); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string][]byte{}
		for _, s := range list.Items {
			out[s.Name] = s.Data
		}
		return out
	}
	upgraded := keepAt(time.Now())
	serverCA := upgraded[cluster.Name+"-api-ca"]["ca.crt"]
	listener := workload.TunnelTLSSecretName(cluster)
	if !bytes.Contains(upgraded[listener]["ca.crt"], serverCA) {
		t.Fatal("the tunnel server does not trust the one CA during the grace")
	}

	notAfter, _ := pki.NotAfter(old[workload.TunnelClientTLSSecretName(cluster)]["tls.crt"])
	later := keepAt(notAfter.Add(time.Minute))
	if _, kept := later[listener]["legacy-trust-until"]; kept {
		t.Error("legacy-trust-until is kept after it passed")
	}
	if bytes.Contains(later[listener]["ca.crt"], serverCA) {
		t.Error("the tunnel server trusts the collector server CA after the grace")
	}
	if !bytes.Equal(later[listener]["ca.crt"], later[workload.TunnelCASecretName(cluster)]["tls.crt"]) {
		t.Error("the tunnel server's ca.crt is not the device CA alone")
	}
	if _, kept := later[cluster.Name+"-api-ca"]["previous-client.crt"]; kept {
		t.Error("the previous client certificate is kept after two thirds of its lifetime")
	}
}

func TestTheKeeperRefusesARoleCASecretItDoesNotOwn(t *testing.T) {
	ctx := context.Background()
	cluster := listenedCluster()
	theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: workload.TunnelCASecretName(cluster), Namespace: cluster.Namespace},
		Data: map[string][]byte{"tls.crt": []byte("someone else's")}}
	k, c := newKeeper(t, theirs)
	own, err := k.OperatorSecret(ctx, cluster)
	if err != nil {
		t.Fatal(err)
	}
	var taken *owned.NameTakenError
	if err := k.TunnelTLS(ctx, cluster, own); !errors.As(err, &taken) || taken.Name != theirs.Name {
		t.Fatalf("TunnelTLS = %v, want a NameTakenError for %s", err, theirs.Name)
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKeyFromObject(theirs), &s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data["tls.crt"]) != "someone else's" || len(s.OwnerReferences) > 0 {
		t.Fatalf("the Secret was changed: %v", s)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: workload.TunnelTLSSecretName(cluster)}, &corev1.Secret{}); err == nil {
		t.Fatal("the tunnel server's Secret was written without its CA")
	}
}
