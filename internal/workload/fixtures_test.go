package workload

import (
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// cluster returns Cluster "c" in namespace "ns" with only an image, changed by
// the given functions.
func cluster(changes ...func(*v1alpha1.Cluster)) *v1alpha1.Cluster {
	c := &v1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Spec:       v1alpha1.ClusterSpec{Image: gnmic.DefaultImage},
	}
	for _, change := range changes {
		change(c)
	}
	return c
}

func withTLS(c *v1alpha1.Cluster) { c.Spec.API.TLS = &v1alpha1.APITLS{} }

// insecure opts the Cluster out of the collector API's TLS.
func insecure(c *v1alpha1.Cluster) {
	c.Spec.API.Insecure = &v1alpha1.APIInsecure{Reason: "tests"}
}
func withPort(port int32) func(*v1alpha1.Cluster) {
	return func(c *v1alpha1.Cluster) { c.Spec.API.RestPort = port }
}
func withReplicas(n int32) func(*v1alpha1.Cluster) {
	return func(c *v1alpha1.Cluster) { c.Spec.Replicas = &n }
}

// withGNMIServer enables the gNMI server, on port (0: the default).
func withGNMIServer(port int32) func(*v1alpha1.Cluster) {
	return func(c *v1alpha1.Cluster) {
		enabled := true
		c.Spec.API.GNMI = &v1alpha1.GNMIServerSpec{Enabled: &enabled, Port: port}
	}
}
