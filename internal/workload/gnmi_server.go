package workload

import (
	"fmt"
	"maps"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
)

// DefaultGNMIPort is the port of the collectors' gNMI server when spec.api.gnmi.port is unset: gNMIc's own
// default (gnmi-server.address ":57400"; the CRD defaults it to the same value). GNMIPortName names it in the
// container, the Service and the NetworkPolicy.
const (
	DefaultGNMIPort int32 = 57400
	GNMIPortName          = "gnmi"
)

// GNMITLSDir is where a collector pod finds the gNMI server's certificate (GNMITLSSecretName).
const GNMITLSDir = "/var/run/gnmic/gnmi-tls"

// GNMIServerEnabled tells whether the collectors of c run their gNMI server (spec.api.gnmi.enabled).
func GNMIServerEnabled(c *v1alpha1.Cluster) bool {
	g := c.Spec.API.GNMI
	return g != nil && g.Enabled != nil && *g.Enabled
}

// GNMIPort is the port of the collectors' gNMI server.
func GNMIPort(c *v1alpha1.Cluster) int32 {
	if g := c.Spec.API.GNMI; g != nil && g.Port != 0 {
		return g.Port
	}
	return DefaultGNMIPort
}

// GNMIServiceName is the name of the Service of the collectors' gNMI server: <cluster>-gnmi.
func GNMIServiceName(c *v1alpha1.Cluster) string { return c.Name + "-gnmi" }

// GNMITLSSecretName is the Secret with the gNMI server's serving certificate, issued by the Cluster's collector
// server CA: <cluster>-gnmi-tls (tls.crt, tls.key, and ca.crt, the subscriber CA its clients' certificates must
// be issued by).
func GNMITLSSecretName(c *v1alpha1.Cluster) string { return c.Name + "-gnmi-tls" }

// GNMICASecretName is the Secret with the Cluster's gNMI subscriber CA, the only CA the gNMI server trusts:
// <cluster>-gnmi-ca (tls.crt, tls.key). Whoever may read it can issue subscriber certificates.
func GNMICASecretName(c *v1alpha1.Cluster) string { return c.Name + "-gnmi-ca" }

// GNMIClientTLSSecretName is the Secret with the subscriber certificate the operator keeps for downstream
// systems of the gNMI server: <cluster>-gnmi-client-tls (tls.crt, tls.key, and ca.crt, the collector server CA
// to verify the server).
func GNMIClientTLSSecretName(c *v1alpha1.Cluster) string { return c.Name + "-gnmi-client-tls" }

// GNMIServerDNSNames are the names the gNMI server's certificate is valid for: its Service's, and every
// collector pod's through the headless Service (a client may subscribe to one pod).
func GNMIServerDNSNames(c *v1alpha1.Cluster) []string {
	return serviceAndPodDNSNames(c, GNMIServiceName(c))
}

// serviceAndPodDNSNames are the names a server's certificate needs when it is reached through the Service
// svc in the Cluster's namespace, or on one collector pod through the Cluster's headless Service.
func serviceAndPodDNSNames(c *v1alpha1.Cluster, svc string) []string {
	pods := fmt.Sprintf("%s.%s.svc", c.Name, c.Namespace)
	return []string{
		svc, svc + "." + c.Namespace, svc + "." + c.Namespace + ".svc", svc + "." + c.Namespace + ".svc.cluster.local",
		"*." + pods, "*." + pods + ".cluster.local",
	}
}

// ReservedPorts are the ports the collectors of c listen on besides their outputs, with what listens there:
// the REST API, and the gNMI and tunnel servers when enabled. No output may listen on one (render.PortTakenError).
func ReservedPorts(c *v1alpha1.Cluster) map[int32]string {
	ports := map[int32]string{RestPort(c): "the collectors' REST API (spec.api.restPort)"}
	if GNMIServerEnabled(c) {
		ports[GNMIPort(c)] = "the collectors' gNMI server (spec.api.gnmi.port)"
	}
	if TunnelEnabled(c) {
		ports[TunnelPort(c)] = "the collectors' gRPC tunnel server (spec.grpcTunnel.port)"
	}
	return ports
}

// gnmiServerSection is the gnmi-server section of the bootstrap file, empty when the server is off. With TLS
// on the collector API, the server serves the certificate of GNMITLSSecretName and requires a client
// certificate issued by the Cluster's subscriber CA (gNMIc rereads the files at most every minute, so a renewed
// certificate needs no restart).
func gnmiServerSection(c *v1alpha1.Cluster) string {
	if !GNMIServerEnabled(c) {
		return ""
	}
	var b strings.Builder
	b.WriteString("gnmi-server:\n")
	fmt.Fprintf(&b, "  address: \":%d\"\n", GNMIPort(c))
	if APITLS(c) {
		b.WriteString("  tls:\n")
		fmt.Fprintf(&b, "    ca-file: %s\n", path.Join(GNMITLSDir, render.CAFile))
		fmt.Fprintf(&b, "    cert-file: %s\n", path.Join(GNMITLSDir, render.CertFile))
		fmt.Fprintf(&b, "    key-file: %s\n", path.Join(GNMITLSDir, render.KeyFile))
		b.WriteString("    client-auth: require-verify\n")
	}
	return b.String()
}

// GNMIService selects the collector pods of c on the gNMI server's port, nil when the server is off.
// spec.api.gnmi.service's type, labels and annotations are applied; the operator's labels win.
func GNMIService(c *v1alpha1.Cluster) *corev1.Service {
	if !GNMIServerEnabled(c) {
		return nil
	}
	spec := c.Spec.API.GNMI.Service
	if spec == nil {
		spec = &v1alpha1.GNMIServiceSpec{}
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
	port := GNMIPort(c)
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: GNMIServiceName(c), Namespace: c.Namespace, Labels: labels,
			Annotations: maps.Clone(spec.Annotations)},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: Labels(c),
			Ports: []corev1.ServicePort{{
				Name: GNMIPortName, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}
