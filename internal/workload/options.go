package workload

import (
	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Options are the inputs of the builders that do not come from the Cluster.
type Options struct {
	// APITLSSecret names the Secret the collectors serve their REST API with
	// (unless spec.api.insecure opts out of TLS): tls.crt and tls.key (the serving
	// certificate) and ca.crt (the CA that signs the operator's client
	// certificate). Empty means APITLSSecretName.
	APITLSSecret string
	// ScrapedOutputs are the prometheus outputs the collectors run: each gets a named container port
	// (OutputPortName). The reconciler holds a change to them back until the pod template changes for
	// another reason, so that a port name alone never rolls the pods.
	ScrapedOutputs []ScrapedOutput
}

// APITLSSecretName is the default name of the Secret with a Cluster's REST API
// certificate: <cluster>-api-tls.
func APITLSSecretName(c *v1alpha1.Cluster) string {
	return c.Name + "-api-tls"
}

func (o Options) apiTLSSecret(c *v1alpha1.Cluster) string {
	if o.APITLSSecret != "" {
		return o.APITLSSecret
	}
	return APITLSSecretName(c)
}
