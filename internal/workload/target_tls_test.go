package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestTargetTLSSecret(t *testing.T) {
	files := map[string][]byte{"leaf-ca__ca.crt": []byte("ca")}
	tests := []struct {
		name  string
		c     *v1alpha1.Cluster
		files map[string][]byte
		want  *corev1.Secret
	}{
		{
			name: "holds the files given, named after the Cluster and labelled with it",
			c:    cluster(), files: files,
			want: &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: "c-target-tls", Namespace: "ns", Labels: map[string]string{v1alpha1.ClusterLabel: "c"}},
				Type:       corev1.SecretTypeOpaque,
				Data:       files,
			},
		},
		{
			name: "exists, empty, when no target needs TLS files",
			c:    cluster(func(c *v1alpha1.Cluster) { c.Name = "edge" }),
			want: &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: "edge-target-tls", Namespace: "ns", Labels: map[string]string{v1alpha1.ClusterLabel: "edge"}},
				Type:       corev1.SecretTypeOpaque,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TargetTLSSecret(tt.c, tt.files); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}
