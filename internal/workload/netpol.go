package workload

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// OperatorPeer identifies the operator's pods for the NetworkPolicy: the
// namespace they run in and their labels. An empty Namespace (the operator
// could not tell where it runs) matches those labels in every namespace.
type OperatorPeer struct {
	Namespace string
	PodLabels map[string]string
}

// namespaceNameLabel is the label the API server sets on every namespace to
// its name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// DefaultOperatorPodLabels are the labels config/manager gives the operator's
// pods (and the bundle's Deployment keeps), a new map on each call.
func DefaultOperatorPodLabels() map[string]string {
	return map[string]string{"control-plane": "controller-manager", "app.kubernetes.io/name": "gnmic-operator"}
}

// NetworkPolicy admits traffic into the collector pods of c from two kinds of
// peers only, and nil (the reconciler deletes any existing one) when
// spec.networkPolicy.enabled is false:
//   - the operator's pods, on the REST API port: they alone push
//     configuration and read the collectors' state;
//   - spec.networkPolicy.outputPeers, or every source when it is empty, on
//     outputPorts: the ports the Cluster's outputs listen on (OutputPorts);
//   - spec.networkPolicy.gnmiPeers, or every source when it is empty, on the
//     gNMI server's port when spec.api.gnmi runs it;
//   - every source on the gRPC tunnel server's port when spec.grpcTunnel runs it: devices dial in from
//     outside the cluster (the tunnel server's TLS admits only devices with a certificate from the
//     Cluster's device CA unless spec.grpcTunnel.clientAuth relaxes it).
//
// The REST and gNMI server ports are never among the outputs' ports, even
// when an output claims one (render refuses such an output). Egress is not restricted: collectors dial devices, message buses
// and remote-write endpoints wherever they are. Traffic from the pods' own
// node, such as the kubelet's probes, is always allowed by NetworkPolicy.
func NetworkPolicy(c *v1alpha1.Cluster, operator OperatorPeer, outputPorts []int32) *networkingv1.NetworkPolicy {
	spec := c.Spec.NetworkPolicy
	if spec.Enabled != nil && !*spec.Enabled {
		return nil
	}
	rest := RestPort(c)
	fromOperator := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{},
		PodSelector:       &metav1.LabelSelector{MatchLabels: maps.Clone(operator.PodLabels)},
	}
	if operator.Namespace != "" {
		fromOperator.NamespaceSelector.MatchLabels = map[string]string{namespaceNameLabel: operator.Namespace}
	}
	ingress := []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcpPorts(rest)}}
	gnmi, tunnel := GNMIServerEnabled(c), TunnelEnabled(c)
	var scraped []int32
	for _, p := range outputPorts {
		if p != rest && !(gnmi && p == GNMIPort(c)) && !(tunnel && p == TunnelPort(c)) {
			scraped = append(scraped, p)
		}
	}
	if len(scraped) > 0 {
		rule := networkingv1.NetworkPolicyIngressRule{Ports: tcpPorts(scraped...)}
		for i := range spec.OutputPeers {
			rule.From = append(rule.From, *spec.OutputPeers[i].DeepCopy())
		}
		ingress = append(ingress, rule)
	}
	if gnmi {
		rule := networkingv1.NetworkPolicyIngressRule{Ports: tcpPorts(GNMIPort(c))}
		for i := range spec.GNMIPeers {
			rule.From = append(rule.From, *spec.GNMIPeers[i].DeepCopy())
		}
		ingress = append(ingress, rule)
	}
	if tunnel {
		// Devices dial in from wherever they are, through a LoadBalancer or NodePort: every source.
		ingress = append(ingress, networkingv1.NetworkPolicyIngressRule{Ports: tcpPorts(TunnelPort(c))})
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: objectMeta(c),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: Labels(c)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     ingress,
		},
	}
}

func tcpPorts(ports ...int32) []networkingv1.NetworkPolicyPort {
	out := make([]networkingv1.NetworkPolicyPort, 0, len(ports))
	for _, p := range ports {
		out = append(out, networkingv1.NetworkPolicyPort{Protocol: ptr(corev1.ProtocolTCP), Port: ptr(intstr.FromInt32(p))})
	}
	return out
}
