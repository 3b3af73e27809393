package workload

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// TargetTLSSecretName is the name of the Secret with the TLS files of a
// Cluster's targets: <cluster>-target-tls.
func TargetTLSSecretName(c *v1alpha1.Cluster) string {
	return c.Name + "-target-tls"
}

// TargetTLSSecret is the Cluster's target TLS Secret holding files, the
// bundle of the TLS files its targets use (render.BundleTLS), keyed by
// render.TLSFileName. Every collector pod mounts it at render.TLSRoot. It
// exists also when no target needs TLS: the pod template mounts it whatever
// the targets are.
func TargetTLSSecret(c *v1alpha1.Cluster, files map[string][]byte) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: TargetTLSSecretName(c), Namespace: c.Namespace, Labels: Labels(c)},
		Type:       corev1.SecretTypeOpaque,
	}
	if len(files) > 0 {
		s.Data = files
	}
	return s
}
