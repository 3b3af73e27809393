package credentials_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"path"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// issued is what the operator's code issues and renders for one Cluster with its REST API, gNMI server and
// tunnel server on: the Secrets the Keeper wrote, the operator's own client configuration, and the listeners'
// TLS as gNMIc builds it from the bootstrap file and the files the pod template mounts.
type issued struct {
	cluster  *operatorv1alpha1.Cluster
	secrets  map[string]map[string][]byte
	operator *tls.Config
	// listeners by name: "REST API", "gNMI server", "tunnel server".
	listeners map[string]*tls.Config
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := operatorv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// listenedCluster is a Cluster whose collectors run all three listeners with TLS and required client
// certificates.
func listenedCluster() *operatorv1alpha1.Cluster {
	return &operatorv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "telemetry", UID: "0b5e-cluster"},
		Spec: operatorv1alpha1.ClusterSpec{
			Image:      "ghcr.io/openconfig/gnmic:0.47.0",
			API:        operatorv1alpha1.APISpec{GNMI: &operatorv1alpha1.GNMIServerSpec{Enabled: ptr.To(true)}},
			GRPCTunnel: &operatorv1alpha1.GRPCTunnelSpec{ClientAuth: operatorv1alpha1.TunnelClientAuthRequireVerify},
		},
	}
}

func newKeeper(t *testing.T, objects ...client.Object) (*credentials.Keeper, client.Client) {
	t.Helper()
	s := newScheme(t)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objects...).Build()
	return &credentials.Keeper{Client: c, Reader: credentials.NewSecretReader(c, c), Scheme: s}, c
}

// keep runs the Keeper's steps for the Cluster in the order the Cluster reconciler runs them.
func keep(ctx context.Context, k *credentials.Keeper, cluster *operatorv1alpha1.Cluster) (*credentials.APITLS, error) {
	own, err := k.OperatorSecret(ctx, cluster)
	if err != nil {
		return nil, err
	}
	api, err := k.APITLS(ctx, cluster, own)
	if err != nil {
		return nil, err
	}
	if err := k.GNMITLS(ctx, cluster, own); err != nil {
		return nil, err
	}
	return api, k.TunnelTLS(ctx, cluster, own)
}

func issue(t *testing.T) issued {
	t.Helper()
	ctx := context.Background()
	cluster := listenedCluster()
	k, c := newKeeper(t)
	api, err := keep(ctx, k, cluster)
	if err != nil {
		t.Fatal(err)
	}
	return render(t, c, cluster, api)
}

// render reads back what the Keeper wrote and builds each listener as the collector does.
func render(t *testing.T, c client.Client, cluster *operatorv1alpha1.Cluster, api *credentials.APITLS) issued {
	t.Helper()
	var list corev1.SecretList
	if err := c.List(context.Background(), &list, client.InNamespace(cluster.Namespace)); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]map[string][]byte{}
	for _, s := range list.Items {
		secrets[s.Name] = s.Data
	}
	files := podFiles(workload.StatefulSet(cluster, workload.Options{}), secrets)
	var bootstrap struct {
		APIServer struct {
			TLS fakecollector.ListenerTLSSection `json:"tls"`
		} `json:"api-server"`
		GNMIServer struct {
			TLS fakecollector.ListenerTLSSection `json:"tls"`
		} `json:"gnmi-server"`
		TunnelServer struct {
			TLS fakecollector.ListenerTLSSection `json:"tls"`
		} `json:"tunnel-server"`
	}
	if err := yaml.Unmarshal([]byte(workload.BootstrapConfig(cluster)), &bootstrap); err != nil {
		t.Fatal(err)
	}
	out := issued{cluster: cluster, secrets: secrets, operator: api.Client, listeners: map[string]*tls.Config{}}
	for name, section := range map[string]fakecollector.ListenerTLSSection{
		"REST API": bootstrap.APIServer.TLS, "gNMI server": bootstrap.GNMIServer.TLS, "tunnel server": bootstrap.TunnelServer.TLS,
	} {
		cfg, err := fakecollector.ListenerTLS(section, files)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out.listeners[name] = cfg
	}
	return out
}

// podFiles reads a file of a collector pod from the Secret volume the pod template mounts at its directory,
// as the kubelet projects a Secret: one file per key.
func podFiles(sts *appsv1.StatefulSet, secrets map[string]map[string][]byte) func(string) ([]byte, error) {
	pod := sts.Spec.Template.Spec
	return func(file string) ([]byte, error) {
		for _, m := range pod.Containers[0].VolumeMounts {
			if m.MountPath != path.Dir(file) {
				continue
			}
			for _, v := range pod.Volumes {
				if v.Name == m.Name && v.Secret != nil {
					data, ok := secrets[v.Secret.SecretName][path.Base(file)]
					if !ok {
						return nil, fmt.Errorf("Secret %s has no key %s", v.Secret.SecretName, path.Base(file))
					}
					return data, nil
				}
			}
		}
		return nil, fmt.Errorf("no Secret volume is mounted at %s", path.Dir(file))
	}
}

// pair loads a certificate and key of a Secret.
func pair(t *testing.T, data map[string][]byte) tls.Certificate {
	t.Helper()
	cert, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// presentingAlways is a client that sends the first of certs (none when empty) whichever CAs the server asks
// for, as an attacker's client would: crypto/tls by itself sends no certificate that the server's CAs did not
// issue, so a listener would never see a certificate of another role, and could not be shown to refuse it.
// It does not verify the server: what is tested is the listener's trust.
func presentingAlways(certs []tls.Certificate) *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if len(certs) == 0 {
				return &tls.Certificate{}, nil
			}
			return &certs[0], nil
		}}
}

func keyPair(t *testing.T, p pki.KeyPair) tls.Certificate {
	t.Helper()
	cert, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// handshake runs one TLS handshake over a localhost connection and tells whether both sides accepted it: the
// server writes one byte once it has verified the client, which the client must read (with TLS 1.3 a client
// finishes its handshake before the server has checked its certificate).
func handshake(server, client *tls.Config) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		tc := tls.Server(conn, server)
		if err := tc.Handshake(); err != nil {
			served <- err
			return
		}
		_, err = tc.Write([]byte{1})
		served <- err
	}()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), client)
	if err != nil {
		<-served
		return fmt.Errorf("client: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, readErr := io.ReadFull(conn, make([]byte, 1))
	if err := <-served; err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return readErr
}

// TestEachListenerAcceptsOnlyItsRole is the trust boundary between the four roles of a Cluster's certificates:
// the operator's REST client, the collectors' servers, dial-in devices and gNMI subscribers. For every pair, a
// certificate of one role is refused by the listener of the other, and accepted by its own, in real
// handshakes with the certificates the operator issues and the TLS it renders for each listener.
func TestEachListenerAcceptsOnlyItsRole(t *testing.T) {
	is := issue(t)
	podName := workload.PodHost(is.cluster, 0)
	type identity struct {
		role  string
		certs []tls.Certificate
	}
	identities := map[string]identity{
		"the operator's client certificate": {"operator", is.operator.Certificates},
		"a collector's REST serving certificate": {"server", []tls.Certificate{
			pair(t, is.secrets[workload.APITLSSecretName(is.cluster)])}},
		"the gNMI server's certificate": {"server", []tls.Certificate{
			pair(t, is.secrets[workload.GNMITLSSecretName(is.cluster)])}},
		"the tunnel server's certificate": {"server", []tls.Certificate{
			pair(t, is.secrets[workload.TunnelTLSSecretName(is.cluster)])}},
		"the device certificate": {"device", []tls.Certificate{
			pair(t, is.secrets[workload.TunnelClientTLSSecretName(is.cluster)])}},
		"the subscriber certificate": {"subscriber", []tls.Certificate{
			pair(t, is.secrets[workload.GNMIClientTLSSecretName(is.cluster)])}},
	}
	// Whoever may read a role's CA Secret issues that role's certificates, and nothing more: a server
	// certificate minted with it for the collectors' names serves no one.
	for _, minted := range []struct{ secret, role string }{
		{workload.TunnelCASecretName(is.cluster), "device"},
		{workload.GNMICASecretName(is.cluster), "subscriber"},
	} {
		ca := pki.KeyPair{CertPEM: is.secrets[minted.secret][corev1.TLSCertKey], KeyPEM: is.secrets[minted.secret][corev1.TLSPrivateKeyKey]}
		clientPair, err := pki.NewClient(ca, "issued from "+minted.secret, time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		serverPair, err := pki.NewServer(ca, "minted from "+minted.secret, []string{podName}, nil, time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		identities["a client certificate issued from "+minted.secret] = identity{minted.role, []tls.Certificate{keyPair(t, clientPair)}}
		identities["a server certificate minted from "+minted.secret] = identity{"none", []tls.Certificate{keyPair(t, serverPair)}}
	}
	listenerRoles := map[string]string{"REST API": "operator", "gNMI server": "subscriber", "tunnel server": "device"}

	for name, id := range identities {
		for listener, accepts := range listenerRoles {
			t.Run(fmt.Sprintf("%s at the %s", name, listener), func(t *testing.T) {
				err := handshake(is.listeners[listener], presentingAlways(id.certs))
				if want := id.role == accepts; want != (err == nil) {
					t.Fatalf("accepted = %v, want %v (a %s certificate at a listener for %s): %v", err == nil, want, id.role, accepts, err)
				}
			})
		}
		// The operator verifies the collectors it pushes to: only a collector server certificate passes.
		t.Run(fmt.Sprintf("%s serving the operator", name), func(t *testing.T) {
			operator := is.operator.Clone()
			operator.ServerName = podName
			err := handshake(&tls.Config{Certificates: id.certs, MinVersion: tls.VersionTLS12}, operator)
			if want := id.role == "server"; want != (err == nil) {
				t.Fatalf("accepted = %v, want %v (a %s certificate serving the operator): %v", err == nil, want, id.role, err)
			}
		})
	}
}

// With clientAuth VerifyIfGiven the tunnel server admits a device without a certificate (docs/dial-in.md says
// what that costs), but a certificate that is sent is still held to the device role.
func TestATunnelThatVerifiesIfGivenStillRefusesOtherRoles(t *testing.T) {
	ctx := context.Background()
	cluster := listenedCluster()
	cluster.Spec.GRPCTunnel.ClientAuth = operatorv1alpha1.TunnelClientAuthVerifyIfGiven
	k, c := newKeeper(t)
	api, err := keep(ctx, k, cluster)
	if err != nil {
		t.Fatal(err)
	}
	is := render(t, c, cluster, api)
	tunnel := is.listeners["tunnel server"]
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		want  bool
	}{
		{"no certificate", nil, true},
		{"the device certificate", []tls.Certificate{pair(t, is.secrets[workload.TunnelClientTLSSecretName(cluster)])}, true},
		{"the subscriber certificate", []tls.Certificate{pair(t, is.secrets[workload.GNMIClientTLSSecretName(cluster)])}, false},
		{"the operator's client certificate", is.operator.Certificates, false},
	} {
		err := handshake(tunnel, presentingAlways(tc.certs))
		if got := err == nil; got != tc.want {
			t.Errorf("%s: accepted = %v, want %v: %v", tc.name, got, tc.want, err)
		}
	}
}
