package targetsource

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
)

// consulOptions are the Consul provider's options from spec.consul, its Secrets read.
func consulOptions(ctx context.Context, refs *refReader, spec *operatorv1alpha1.ConsulInventory) (inventory.ConsulOptions, error) {
	o := inventory.ConsulOptions{
		Address:        spec.Address,
		Datacenter:     spec.Datacenter,
		Services:       spec.Services,
		Tags:           spec.Tags,
		Filter:         spec.Filter,
		NodeMetaLabels: spec.NodeMetaLabels,
	}
	if spec.Timeout != nil {
		o.Timeout = spec.Timeout.Duration
	}
	if ref := spec.TokenSecretRef; ref != nil {
		token, err := refs.secretKey(ctx, ref.Name, ref.Key)
		if err != nil {
			return o, err
		}
		o.Token = strings.TrimSpace(string(token))
	}
	if t := spec.TLS; t != nil {
		o.ServerName, o.InsecureSkipVerify = t.ServerName, t.InsecureSkipVerify
		if ca := t.CARef; ca != nil {
			var err error
			if o.CABundle, err = refs.caBundle(ctx, ca); err != nil {
				return o, err
			}
		}
		if name := t.ClientCertSecretName; name != "" {
			var err error
			if o.ClientCert, err = refs.secretKey(ctx, name, corev1.TLSCertKey); err != nil {
				return o, err
			}
			if o.ClientKey, err = refs.secretKey(ctx, name, corev1.TLSPrivateKeyKey); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}
