package workload

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// HeadlessService governs the StatefulSet of c and gives each collector pod
// its DNS name (PodHost). It is named after the Cluster. It publishes
// not-ready addresses because the operator must reach a pod's REST API as
// soon as it listens, whatever the pod's readiness says, and because the
// Service balances nothing: it only names pods.
func HeadlessService(c *v1alpha1.Cluster) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(c),
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 Labels(c),
			Ports: []corev1.ServicePort{{
				Name:       RestPortName,
				Port:       RestPort(c),
				TargetPort: intstr.FromString(RestPortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}
