package workload

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func withTunnel(t *v1alpha1.GRPCTunnelSpec) func(*v1alpha1.Cluster) {
	return func(c *v1alpha1.Cluster) { c.Spec.GRPCTunnel = t }
}

// tunnelSection is the tunnel-server section of the bootstrap file as gNMIc reads it (pkg/config/tunnel_server.go).
func tunnelSection(t *testing.T, c *v1alpha1.Cluster) map[string]any {
	t.Helper()
	var file map[string]any
	if err := yaml.Unmarshal([]byte(BootstrapConfig(c)), &file); err != nil {
		t.Fatalf("bootstrap file: %v", err)
	}
	section, _ := file["tunnel-server"].(map[string]any)
	return section
}

func TestTunnelServerSection(t *testing.T) {
	tlsFiles := func(auth string, withCA bool) map[string]any {
		m := map[string]any{"cert-file": "/var/run/gnmic/tunnel-tls/tls.crt", "key-file": "/var/run/gnmic/tunnel-tls/tls.key", "client-auth": auth}
		if withCA {
			m["ca-file"] = "/var/run/gnmic/tunnel-tls/ca.crt"
		}
		return m
	}
	insecure := func(c *v1alpha1.Cluster) { c.Spec.API.Insecure = &v1alpha1.APIInsecure{Reason: "lab"} }
	tests := []struct {
		name    string
		cluster *v1alpha1.Cluster
		want    map[string]any
	}{
		{"none without spec.grpcTunnel", cluster(), nil},
		{"gNMIc's address on the default port, mutual TLS with the Cluster's CA",
			cluster(withTunnel(&v1alpha1.GRPCTunnelSpec{})),
			map[string]any{"address": ":57401", "tls": tlsFiles("require-verify", true)}},
		{"the spec's port, a certificate verified when given",
			cluster(withTunnel(&v1alpha1.GRPCTunnelSpec{Port: 4000, ClientAuth: v1alpha1.TunnelClientAuthVerifyIfGiven})),
			map[string]any{"address": ":4000", "tls": tlsFiles("verify-if-given", true)}},
		{"no client certificate asked: no ca-file, which would make gNMIc require one",
			cluster(withTunnel(&v1alpha1.GRPCTunnelSpec{ClientAuth: v1alpha1.TunnelClientAuthNone})),
			map[string]any{"address": ":57401", "tls": tlsFiles("", false)}},
		{"plain gRPC when the Cluster opted out of TLS",
			cluster(withTunnel(&v1alpha1.GRPCTunnelSpec{}), insecure),
			map[string]any{"address": ":57401"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tunnelSection(t, tt.cluster); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("tunnel-server = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTunnelServiceFollowsTheSpec(t *testing.T) {
	if svc := TunnelService(cluster()); svc != nil {
		t.Fatalf("TunnelService without spec.grpcTunnel = %+v, want none", svc)
	}
	svc := TunnelService(cluster(withTunnel(&v1alpha1.GRPCTunnelSpec{Port: 4000, Service: &v1alpha1.TunnelServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, Labels: map[string]string{"team": "net", v1alpha1.ClusterLabel: "x"},
		Annotations: map[string]string{"lb.example/internal": "true"}, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
		LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}})))
	want := corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{v1alpha1.ClusterLabel: "c"},
		Ports:                    []corev1.ServicePort{{Name: "grpc-tunnel", Port: 4000, TargetPort: intstr.FromInt32(4000), Protocol: corev1.ProtocolTCP}},
		ExternalTrafficPolicy:    corev1.ServiceExternalTrafficPolicyLocal,
		LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}
	if !reflect.DeepEqual(svc.Spec, want) {
		t.Errorf("spec:\n got %+v\nwant %+v", svc.Spec, want)
	}
	if svc.Name != "c-tunnel" || svc.Labels[v1alpha1.ClusterLabel] != "c" || svc.Labels["team"] != "net" || svc.Annotations["lb.example/internal"] != "true" {
		t.Errorf("metadata = %+v", svc.ObjectMeta)
	}
	clusterIP := TunnelService(cluster(withTunnel(&v1alpha1.GRPCTunnelSpec{Service: &v1alpha1.TunnelServiceSpec{
		ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}})))
	if clusterIP.Spec.Type != corev1.ServiceTypeClusterIP || clusterIP.Spec.ExternalTrafficPolicy != "" || clusterIP.Spec.LoadBalancerSourceRanges != nil {
		t.Errorf("a ClusterIP Service takes no external traffic settings (the API server refuses them): %+v", clusterIP.Spec)
	}
}

func TestTunnelPortIsReservedNamedAndAdmittedFromEverySource(t *testing.T) {
	c := cluster(withTunnel(&v1alpha1.GRPCTunnelSpec{Port: 4000}))
	if what := ReservedPorts(c)[4000]; !strings.Contains(what, "tunnel") {
		t.Errorf("ReservedPorts[4000] = %q, want the tunnel server", what)
	}
	ports := containerPorts(c, Options{})
	if !slices.Contains(ports, corev1.ContainerPort{Name: "grpc-tunnel", ContainerPort: 4000, Protocol: corev1.ProtocolTCP}) {
		t.Errorf("container ports %v lack grpc-tunnel", ports)
	}
	np := NetworkPolicy(c, OperatorPeer{Namespace: "op"}, []int32{4000, 9804})
	var tunnelRule *networkingv1.NetworkPolicyIngressRule
	for i, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if p.Port.IntVal == 4000 {
				tunnelRule = &np.Spec.Ingress[i]
			}
		}
	}
	if tunnelRule == nil || len(tunnelRule.From) != 0 || len(tunnelRule.Ports) != 1 {
		t.Fatalf("ingress %+v: want one rule admitting every source on the tunnel port, and only there", np.Spec.Ingress)
	}
	if names := TunnelServerDNSNames(c); !reflect.DeepEqual(names[len(names)-2:], []string{"*.c.ns.svc", "*.c.ns.svc.cluster.local"}) {
		t.Errorf("TunnelServerDNSNames = %v, want every pod's name too", names)
	}
}
