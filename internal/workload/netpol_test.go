package workload

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestNetworkPolicy(t *testing.T) {
	operator := OperatorPeer{Namespace: "gnmic-system", PodLabels: DefaultOperatorPodLabels()}
	fromOperator := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "gnmic-system"}},
		PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"control-plane": "controller-manager", "app.kubernetes.io/name": "gnmic-operator"}},
	}
	tcp := func(ports ...int32) []networkingv1.NetworkPolicyPort {
		var out []networkingv1.NetworkPolicyPort
		for _, p := range ports {
			out = append(out, networkingv1.NetworkPolicyPort{Protocol: ptr(corev1.ProtocolTCP), Port: ptr(intstr.FromInt32(p))})
		}
		return out
	}
	monitoring := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}
	tests := []struct {
		name        string
		cluster     *v1alpha1.Cluster
		operator    OperatorPeer
		outputPorts []int32
		wantNil     bool
		want        []networkingv1.NetworkPolicyIngressRule
	}{
		{
			name: "admits only the operator's pods, on the REST API port, by default", cluster: cluster(), operator: operator,
			want: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)}},
		},
		{
			name: "follows the spec's REST port", cluster: cluster(withPort(9443)), operator: operator,
			want: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(9443)}},
		},
		{
			name: "protects a Cluster that opted out of TLS all the same", cluster: cluster(insecure), operator: operator,
			want: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)}},
		},
		{
			name: "admits every source to the ports the outputs listen on", cluster: cluster(), operator: operator,
			outputPorts: []int32{9273, 9804},
			want: []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)},
				{Ports: tcp(9273, 9804)},
			},
		},
		{
			name: "admits only outputPeers to the outputs' ports when the spec names them", operator: operator, outputPorts: []int32{9804},
			cluster: cluster(func(c *v1alpha1.Cluster) {
				c.Spec.NetworkPolicy.OutputPeers = []networkingv1.NetworkPolicyPeer{monitoring}
			}),
			want: []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)},
				{From: []networkingv1.NetworkPolicyPeer{monitoring}, Ports: tcp(9804)},
			},
		},
		{
			name: "never opens the REST port to others, even when an output claims it", cluster: cluster(), operator: operator,
			outputPorts: []int32{7890},
			want:        []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)}},
		},
		{
			name: "admits the operator's pods from any namespace when the operator's namespace is not known", cluster: cluster(),
			operator: OperatorPeer{PodLabels: DefaultOperatorPodLabels()},
			want: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{}, PodSelector: fromOperator.PodSelector}}, Ports: tcp(7890)}},
		},
		{
			name: "admits every source to the gNMI server's port when it runs", operator: operator, outputPorts: []int32{9804},
			cluster: cluster(withGNMIServer(0)),
			want: []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)},
				{Ports: tcp(9804)},
				{Ports: tcp(57400)},
			},
		},
		{
			name: "admits only gnmiPeers to the gNMI server's port when the spec names them", operator: operator,
			cluster: cluster(withGNMIServer(50051), func(c *v1alpha1.Cluster) {
				c.Spec.NetworkPolicy.GNMIPeers = []networkingv1.NetworkPolicyPeer{monitoring}
			}),
			want: []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)},
				{From: []networkingv1.NetworkPolicyPeer{monitoring}, Ports: tcp(50051)},
			},
		},
		{
			name: "never opens the gNMI server's port to outputPeers, even when an output claims it", operator: operator,
			outputPorts: []int32{57400},
			cluster: cluster(withGNMIServer(0), func(c *v1alpha1.Cluster) {
				c.Spec.NetworkPolicy.OutputPeers = []networkingv1.NetworkPolicyPeer{monitoring}
			}),
			want: []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)},
				{Ports: tcp(57400)},
			},
		},
		{
			name: "opens no port for a gNMI server that is not enabled", operator: operator,
			cluster: cluster(func(c *v1alpha1.Cluster) { c.Spec.API.GNMI = &v1alpha1.GNMIServerSpec{Port: 57400} }),
			want:    []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcp(7890)}},
		},
		{
			name: "keeps none when disabled", operator: operator, wantNil: true,
			cluster: cluster(func(c *v1alpha1.Cluster) { c.Spec.NetworkPolicy.Enabled = ptr(false) }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			np := NetworkPolicy(tt.cluster, tt.operator, tt.outputPorts)
			if tt.wantNil {
				if np != nil {
					t.Fatalf("NetworkPolicy = %+v, want none", np.Spec)
				}
				return
			}
			if np == nil {
				t.Fatal("NetworkPolicy = nil, want one")
			}
			if np.Name != "c" || np.Namespace != "ns" || !reflect.DeepEqual(np.Labels, Labels(tt.cluster)) {
				t.Errorf("metadata = %+v, want c in ns with the cluster label", np.ObjectMeta)
			}
			if np.APIVersion != "networking.k8s.io/v1" || np.Kind != "NetworkPolicy" {
				t.Errorf("type = %v", np.TypeMeta)
			}
			if !reflect.DeepEqual(np.Spec.PodSelector, metav1.LabelSelector{MatchLabels: Labels(tt.cluster)}) {
				t.Errorf("selects %v, want the Cluster's pods", np.Spec.PodSelector)
			}
			if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
				t.Errorf("policy types = %v, want Ingress only: the collectors dial devices and outputs", np.Spec.PolicyTypes)
			}
			if !reflect.DeepEqual(np.Spec.Ingress, tt.want) {
				got, _ := json.Marshal(np.Spec.Ingress)
				want, _ := json.Marshal(tt.want)
				t.Fatalf("ingress:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestNetworkPolicyDoesNotShareMemoryWithItsInputs(t *testing.T) {
	labels := DefaultOperatorPodLabels()
	c := cluster(func(c *v1alpha1.Cluster) {
		c.Spec.NetworkPolicy.OutputPeers = []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "prometheus"}}}}
	})
	np := NetworkPolicy(c, OperatorPeer{Namespace: "op", PodLabels: labels}, []int32{9804})
	np.Spec.Ingress[0].From[0].PodSelector.MatchLabels["control-plane"] = "changed"
	np.Spec.Ingress[1].From[0].PodSelector.MatchLabels["app"] = "changed"
	if labels["control-plane"] != "controller-manager" || c.Spec.NetworkPolicy.OutputPeers[0].PodSelector.MatchLabels["app"] != "prometheus" {
		t.Fatal("the NetworkPolicy shares memory with the Cluster or the operator's labels")
	}
	if DefaultOperatorPodLabels()["control-plane"] != "controller-manager" {
		t.Fatal("DefaultOperatorPodLabels hands out shared memory")
	}
}

func TestOutputPorts(t *testing.T) {
	tests := []struct {
		name    string
		outputs map[string]map[string]any
		want    []int32
	}{
		{name: "none without outputs"},
		{name: "a prometheus output listens on 9804 unless told otherwise",
			outputs: map[string]map[string]any{"prom": {"type": "prometheus"}}, want: []int32{9804}},
		{name: "a prometheus output listens on the port of its listen address",
			outputs: map[string]map[string]any{"prom": {"type": "prometheus", "listen": ":9273"}}, want: []int32{9273}},
		{name: "a listen address with a host counts by its port",
			outputs: map[string]map[string]any{"a": {"type": "prometheus", "listen": "0.0.0.0:9100"}, "b": {"type": "prometheus", "listen": "[::]:9101"}},
			want:    []int32{9100, 9101}},
		{name: "an empty listen address is the default",
			outputs: map[string]map[string]any{"prom": {"type": "prometheus", "listen": ""}}, want: []int32{9804}},
		{name: "a gnmi output listens on 57400 unless told otherwise",
			outputs: map[string]map[string]any{"g": {"type": "gnmi"}}, want: []int32{57400}},
		{name: "a gnmi output listens on the port of its address",
			outputs: map[string]map[string]any{"g": {"type": "gnmi", "address": ":6030"}}, want: []int32{6030}},
		{name: "a gnmi output on a unix socket listens on no port",
			outputs: map[string]map[string]any{"g": {"type": "gnmi", "address": "unix:///tmp/gnmi.sock"}}},
		{name: "outputs that send elsewhere listen on nothing, whatever their address says",
			outputs: map[string]map[string]any{
				"k": {"type": "kafka", "address": "kafka:9092"}, "w": {"type": "prometheus_write", "url": "http://x:9090"},
				"f": {"type": "file"}, "t": {"type": "tcp", "address": "x:1"}, "u": {"type": "udp", "address": "x:2"},
				"n": {"type": "nats", "address": "nats:4222"}, "j": {"type": "jetstream"}, "i": {"type": "influxdb"},
				"o": {"type": "otlp", "endpoint": "x:4317"},
			}},
		{name: "addresses the collector could not listen on are left out",
			outputs: map[string]map[string]any{
				"a": {"type": "prometheus", "listen": "9804"}, "b": {"type": "prometheus", "listen": ":0"},
				"c": {"type": "prometheus", "listen": ":70000"}, "d": {"type": "prometheus", "listen": ":$PORT"},
				"e": {"type": "prometheus", "listen": 9804},
			}},
		{name: "ports are sorted and counted once",
			outputs: map[string]map[string]any{
				"z": {"type": "prometheus", "listen": ":9804"}, "a": {"type": "prometheus"}, "g": {"type": "gnmi", "address": ":1234"},
			}, want: []int32{1234, 9804}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OutputPorts(tt.outputs); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("OutputPorts = %v, want %v", got, tt.want)
			}
		})
	}
}
