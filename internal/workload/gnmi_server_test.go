package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestGNMIService(t *testing.T) {
	tests := []struct {
		name    string
		cluster *v1alpha1.Cluster
		want    *corev1.Service
	}{
		{name: "none while the server is off", cluster: cluster()},
		{
			name: "a ClusterIP Service on the default port", cluster: cluster(withGNMIServer(0)),
			want: &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{v1alpha1.ClusterLabel: "c"},
				Ports: []corev1.ServicePort{{Name: "gnmi", Port: 57400, TargetPort: intstr.FromInt32(57400), Protocol: corev1.ProtocolTCP}}}},
		},
		{
			name: "the spec's port, type, labels and annotations, the operator's labels winning",
			cluster: cluster(withGNMIServer(50051), func(c *v1alpha1.Cluster) {
				c.Spec.API.GNMI.Service = &v1alpha1.GNMIServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
					Labels:      map[string]string{"team": "net", v1alpha1.ClusterLabel: "x"},
					Annotations: map[string]string{"lb.example/internal": "true"}}
			}),
			want: &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{v1alpha1.ClusterLabel: "c"},
				Ports: []corev1.ServicePort{{Name: "gnmi", Port: 50051, TargetPort: intstr.FromInt32(50051), Protocol: corev1.ProtocolTCP}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := GNMIService(tt.cluster)
			if tt.want == nil {
				if svc != nil {
					t.Fatalf("GNMIService = %+v, want none", svc)
				}
				return
			}
			if svc.Name != "c-gnmi" || svc.Namespace != "ns" || svc.Labels[v1alpha1.ClusterLabel] != "c" {
				t.Errorf("metadata = %+v", svc.ObjectMeta)
			}
			if s := tt.cluster.Spec.API.GNMI.Service; s != nil {
				if svc.Labels["team"] != "net" || !reflect.DeepEqual(svc.Annotations, s.Annotations) {
					t.Errorf("labels %v annotations %v, want the spec's", svc.Labels, svc.Annotations)
				}
			}
			if !reflect.DeepEqual(svc.Spec, tt.want.Spec) {
				t.Errorf("spec:\n got %+v\nwant %+v", svc.Spec, tt.want.Spec)
			}
		})
	}
}

func TestGNMIServerCertificateNamesItsServiceAndEveryPod(t *testing.T) {
	want := []string{"c-gnmi", "c-gnmi.ns", "c-gnmi.ns.svc", "c-gnmi.ns.svc.cluster.local", "*.c.ns.svc", "*.c.ns.svc.cluster.local"}
	if got := GNMIServerDNSNames(cluster()); !reflect.DeepEqual(got, want) {
		t.Fatalf("GNMIServerDNSNames = %v, want %v", got, want)
	}
	if host := PodHost(cluster(), 3); host != "c-3.c.ns.svc" {
		t.Fatalf("PodHost = %s: the wildcard no longer covers the pods", host)
	}
}

func TestGNMIServerSettings(t *testing.T) {
	off, on := false, true
	tests := []struct {
		name    string
		gnmi    *v1alpha1.GNMIServerSpec
		enabled bool
		port    int32
	}{
		{"off without the section", nil, false, 57400},
		{"off unless enabled", &v1alpha1.GNMIServerSpec{Port: 1234}, false, 1234},
		{"off when disabled", &v1alpha1.GNMIServerSpec{Enabled: &off}, false, 57400},
		{"on, on gNMIc's default port", &v1alpha1.GNMIServerSpec{Enabled: &on}, true, 57400},
		{"on, on the spec's port", &v1alpha1.GNMIServerSpec{Enabled: &on, Port: 50051}, true, 50051},
	}
	for _, tt := range tests {
		c := cluster(func(c *v1alpha1.Cluster) { c.Spec.API.GNMI = tt.gnmi })
		if GNMIServerEnabled(c) != tt.enabled || GNMIPort(c) != tt.port {
			t.Errorf("%s: enabled %v port %d, want %v %d", tt.name, GNMIServerEnabled(c), GNMIPort(c), tt.enabled, tt.port)
		}
	}
}
