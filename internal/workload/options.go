package workload

import (
	"slices"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Options are the inputs of the builders that do not come from the Cluster.
type Options struct {
	// APITLSSecret names the Secret the collectors serve their REST API with
	// when spec.api.tls is set: tls.crt and tls.key (the serving
	// certificate) and ca.crt (the CA that signs the operator's client
	// certificate). Empty means APITLSSecretName.
	APITLSSecret string

	// TargetTLSSecrets name the tls.secretRef Secrets of the profiles of the
	// Cluster's targets (see selection.TLSSecretsOf). Every pod mounts all of
	// them, since any target may be placed on any pod; adding one rolls the
	// pods.
	TargetTLSSecrets []string
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

// targetTLSSecrets returns the target TLS Secrets sorted, without duplicates
// and empty names, so that the pod template does not depend on their order.
func (o Options) targetTLSSecrets() []string {
	names := slices.DeleteFunc(slices.Clone(o.TargetTLSSecrets), func(n string) bool { return n == "" })
	slices.Sort(names)
	return slices.Compact(names)
}
