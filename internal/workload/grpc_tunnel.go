package workload

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
)

// DefaultTunnelPort is the port of the collectors' gRPC tunnel server when spec.grpcTunnel.port is unset (the
// CRD defaults it to the same value): one above the gNMI server's default, as gNMIc's own examples use it.
// TunnelPortName names it in the container, the Service and the NetworkPolicy.
const (
	DefaultTunnelPort int32 = 57401
	TunnelPortName          = "grpc-tunnel"
)

// TunnelTLSDir is where a collector pod finds the tunnel server's certificate (TunnelTLSSecretName).
const TunnelTLSDir = "/var/run/gnmic/tunnel-tls"

// TunnelEnabled tells whether the collectors of c run the gRPC tunnel server (spec.grpcTunnel set).
func TunnelEnabled(c *v1alpha1.Cluster) bool { return c.Spec.GRPCTunnel != nil }

// TunnelPort is the port of the collectors' tunnel server.
func TunnelPort(c *v1alpha1.Cluster) int32 {
	if t := c.Spec.GRPCTunnel; t != nil && t.Port != 0 {
		return t.Port
	}
	return DefaultTunnelPort
}

// TunnelServiceName is the name of the Service devices dial: <cluster>-tunnel.
func TunnelServiceName(c *v1alpha1.Cluster) string { return c.Name + "-tunnel" }

// TunnelTLSSecretName is the Secret with the tunnel server's certificate, issued by the Cluster's collector
// server CA: <cluster>-tunnel-tls (tls.crt, tls.key, and ca.crt, the device CA dialing devices' certificates
// must be issued by).
func TunnelTLSSecretName(c *v1alpha1.Cluster) string { return c.Name + "-tunnel-tls" }

// TunnelCASecretName is the Secret with the Cluster's dial-in device CA, the only CA the tunnel server trusts:
// <cluster>-tunnel-ca (tls.crt, tls.key). Whoever may read it can issue device certificates.
func TunnelCASecretName(c *v1alpha1.Cluster) string { return c.Name + "-tunnel-ca" }

// TunnelClientTLSSecretName is the Secret with a device certificate the operator keeps for dial-in devices:
// <cluster>-tunnel-client-tls (tls.crt, tls.key, and ca.crt, the collector server CA to verify the tunnel
// server).
func TunnelClientTLSSecretName(c *v1alpha1.Cluster) string { return c.Name + "-tunnel-client-tls" }

// TunnelServerDNSNames are the names the tunnel server's certificate is valid for: its Service's, and every
// collector pod's through the headless Service. A device reaching a LoadBalancer by another name (an IP, an
// external DNS name) must be told the server name to verify (for example with gNMIc's --tls-server-name).
func TunnelServerDNSNames(c *v1alpha1.Cluster) []string {
	return serviceAndPodDNSNames(c, TunnelServiceName(c))
}

// tunnelClientAuth is gNMIc's tunnel-server.tls.client-auth for spec.grpcTunnel.clientAuth.
func tunnelClientAuth(c *v1alpha1.Cluster) string {
	switch c.Spec.GRPCTunnel.ClientAuth {
	case v1alpha1.TunnelClientAuthNone:
		return ""
	case v1alpha1.TunnelClientAuthVerifyIfGiven:
		return "verify-if-given"
	default:
		return "require-verify"
	}
}

// tunnelServerSection is the tunnel-server section of the bootstrap file, empty when the tunnel is off. gNMIc
// reads address, tls.{ca-file,cert-file,key-file,client-auth} (pkg/config/tunnel_server.go); its match rules
// are pushed through the REST API as tunnel-target-matches, never written here, so that a changed
// TunnelTargetPolicy restarts no pod. With client-auth empty, ca-file is left out: gNMIc would otherwise
// default client-auth to require-verify.
func tunnelServerSection(c *v1alpha1.Cluster) string {
	if !TunnelEnabled(c) {
		return ""
	}
	var b strings.Builder
	b.WriteString("tunnel-server:\n")
	fmt.Fprintf(&b, "  address: \":%d\"\n", TunnelPort(c))
	if APITLS(c) {
		auth := tunnelClientAuth(c)
		b.WriteString("  tls:\n")
		if auth != "" {
			fmt.Fprintf(&b, "    ca-file: %s\n", path.Join(TunnelTLSDir, render.CAFile))
		}
		fmt.Fprintf(&b, "    cert-file: %s\n", path.Join(TunnelTLSDir, render.CertFile))
		fmt.Fprintf(&b, "    key-file: %s\n", path.Join(TunnelTLSDir, render.KeyFile))
		fmt.Fprintf(&b, "    client-auth: %q\n", auth)
	}
	return b.String()
}

// TunnelService selects the collector pods of c on the tunnel server's port, nil when the tunnel is off.
// spec.grpcTunnel.service's type, labels, annotations and traffic settings are applied; the operator's labels
// win. A device's tunnel is one long-lived gRPC stream: whichever pod the Service sends it to collects it.
func TunnelService(c *v1alpha1.Cluster) *corev1.Service {
	if !TunnelEnabled(c) {
		return nil
	}
	spec := c.Spec.GRPCTunnel.Service
	if spec == nil {
		spec = &v1alpha1.TunnelServiceSpec{}
	}
	labels := maps.Clone(spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, Labels(c))
	typ := spec.Type
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	port := TunnelPort(c)
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: TunnelServiceName(c), Namespace: c.Namespace, Labels: labels,
			Annotations: maps.Clone(spec.Annotations)},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: Labels(c),
			Ports: []corev1.ServicePort{{
				Name: TunnelPortName, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
	if typ != corev1.ServiceTypeClusterIP {
		svc.Spec.ExternalTrafficPolicy = spec.ExternalTrafficPolicy
	}
	if typ == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerSourceRanges = slices.Clone(spec.LoadBalancerSourceRanges)
	}
	return svc
}
