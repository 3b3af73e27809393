package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestHeadlessService(t *testing.T) {
	svc := HeadlessService(cluster(withPort(9000)))
	tests := []struct {
		name      string
		got, want any
	}{
		{"is named after the cluster in its namespace", [2]string{svc.Name, svc.Namespace}, [2]string{"c", "ns"}},
		{"is headless", svc.Spec.ClusterIP, corev1.ClusterIPNone},
		{"publishes pods before they are ready", svc.Spec.PublishNotReadyAddresses, true},
		{"selects the cluster's pods", svc.Spec.Selector, map[string]string{"operator.gnmic.dev/cluster": "c"}},
		{"exposes the REST port", svc.Spec.Ports, []corev1.ServicePort{{Name: "rest", Port: 9000, TargetPort: intstr.FromString("rest"), Protocol: corev1.ProtocolTCP}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Fatalf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}
