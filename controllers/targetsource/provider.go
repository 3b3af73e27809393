package targetsource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/pushendpoint"
)

// providerName is the provider a TargetSource's spec sets, as status.provider shows it.
func providerName(spec *operatorv1alpha1.TargetSourceSpec) string {
	switch {
	case spec.HTTP != nil:
		return "http"
	case spec.Push != nil:
		return "push"
	case spec.Consul != nil:
		return "consul"
	}
	return ""
}

// errNoProvider: the spec sets no provider this operator knows (the CRD's rule makes it rare: an older CRD).
var errNoProvider = errors.New("the spec sets no provider")

// newProvider reads what the provider a TargetSource's spec asks for needs (its Secrets and ConfigMaps) and
// returns how to build it, with a fingerprint that changes whenever it must be rebuilt: the spec's generation,
// or the resourceVersion of a Secret or ConfigMap it read. Each provider adds one case.
func (r *Reconciler) newProvider(ctx context.Context, ts *operatorv1alpha1.TargetSource) (build func() (inventory.Provider, error), fingerprint string, err error) {
	refs := &refReader{reader: r.APIReader, namespace: ts.Namespace}
	switch {
	case ts.Spec.HTTP != nil:
		opts, err := httpOptions(ctx, refs, ts.Spec.HTTP, ts.Spec.Mapping.Preset)
		if err != nil {
			return nil, "", err
		}
		if r.HTTPTransport != nil {
			opts.Transport = r.HTTPTransport
		}
		opts.Budget = budgetOf(&ts.Spec.Sync)
		build = func() (inventory.Provider, error) { return inventory.NewHTTP(opts) }
	case ts.Spec.Push != nil:
		// The push provider reads the snapshot's ConfigMap at each fetch; the auth Secret is the endpoint's.
		build = func() (inventory.Provider, error) { return pushendpoint.NewProvider(r.APIReader, ts), nil }
	case ts.Spec.Consul != nil:
		opts, err := consulOptions(ctx, refs, ts.Spec.Consul)
		if err != nil {
			return nil, "", err
		}
		opts.Budget = budgetOf(&ts.Spec.Sync)
		build = func() (inventory.Provider, error) { return inventory.NewConsul(opts) }
	default:
		return nil, "", errNoProvider
	}
	return build, fmt.Sprintf("%s/%d/%s", ts.UID, ts.Generation, strings.Join(refs.versions, ",")), nil
}

// httpOptions are the HTTP provider's options from spec.http, its Secrets read, its fields defaulted from the
// preset.
func httpOptions(ctx context.Context, refs *refReader, spec *operatorv1alpha1.HTTPInventory, preset string) (inventory.HTTPOptions, error) {
	o := inventory.HTTPOptions{
		URL:          spec.URL,
		Header:       http.Header{},
		RecordsField: spec.RecordsField,
		MaxPageBytes: spec.MaxPageBytes,
	}
	for k, v := range spec.Headers {
		o.Header.Set(k, v)
	}
	if spec.Timeout != nil {
		o.Timeout = spec.Timeout.Duration
	}
	if p := spec.Pagination; p != nil {
		o.NextField, o.CountField, o.MaxPages = p.NextField, p.CountField, int(p.MaxPages)
	}
	if preset == operatorv1alpha1.MappingPresetNetBox {
		o.RecordsField = cmpOr(o.RecordsField, "results")
		o.NextField = cmpOr(o.NextField, "next")
		o.CountField = cmpOr(o.CountField, "count")
	}
	if a := spec.Auth; a != nil {
		switch {
		case a.Token != nil:
			token, err := refs.secretKey(ctx, a.Token.SecretKeyRef.Name, a.Token.SecretKeyRef.Key)
			if err != nil {
				return o, err
			}
			o.Header.Set("Authorization", cmpOr(a.Token.Scheme, "Bearer")+" "+strings.TrimSpace(string(token)))
		case a.Basic != nil:
			user, err := refs.secretKey(ctx, a.Basic.SecretName, "username")
			if err != nil {
				return o, err
			}
			password, err := refs.secretKey(ctx, a.Basic.SecretName, "password")
			if err != nil {
				return o, err
			}
			o.Username, o.Password = string(user), string(password)
		}
	}
	if t := spec.TLS; t != nil {
		o.ServerName, o.InsecureSkipVerify = t.ServerName, t.InsecureSkipVerify
		if ca := t.CARef; ca != nil {
			var err error
			if o.CABundle, err = refs.caBundle(ctx, ca); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

func cmpOr(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// refReader reads the Secrets and ConfigMaps a provider names, from the API server (the operator caches
// no Secret data), and notes the resourceVersion of each for the provider's fingerprint.
type refReader struct {
	reader    client.Reader
	namespace string
	versions  []string
}

// errRef is a Secret or ConfigMap a provider needs that is missing, or lacks the key: the sync fails with it
// as its message.
type errRef struct{ msg string }

func (e errRef) Error() string { return e.msg }

func (r *refReader) secretKey(ctx context.Context, name, key string) ([]byte, error) {
	var s corev1.Secret
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.namespace, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, errRef{fmt.Sprintf("Secret %s not found", name)}
		}
		return nil, fmt.Errorf("read Secret %s: %w", name, err)
	}
	r.versions = append(r.versions, "secret/"+name+"@"+s.ResourceVersion)
	v, ok := s.Data[key]
	if !ok {
		return nil, errRef{fmt.Sprintf("Secret %s has no key %s", name, key)}
	}
	return v, nil
}

func (r *refReader) configMapKey(ctx context.Context, name, key string) ([]byte, error) {
	var c corev1.ConfigMap
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.namespace, Name: name}, &c); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, errRef{fmt.Sprintf("ConfigMap %s not found", name)}
		}
		return nil, fmt.Errorf("read ConfigMap %s: %w", name, err)
	}
	r.versions = append(r.versions, "configmap/"+name+"@"+c.ResourceVersion)
	if v, ok := c.Data[key]; ok {
		return []byte(v), nil
	}
	if v, ok := c.BinaryData[key]; ok {
		return v, nil
	}
	return nil, errRef{fmt.Sprintf("ConfigMap %s has no key %s", name, key)}
}

// caBundle reads the PEM CA bundle a provider's TLS names, from a Secret's or a ConfigMap's key (nil when the
// reference names neither, which the CRD refuses).
func (r *refReader) caBundle(ctx context.Context, ca *operatorv1alpha1.CABundleReference) ([]byte, error) {
	switch {
	case ca.SecretKeyRef != nil:
		return r.secretKey(ctx, ca.SecretKeyRef.Name, ca.SecretKeyRef.Key)
	case ca.ConfigMapKeyRef != nil:
		return r.configMapKey(ctx, ca.ConfigMapKeyRef.Name, ca.ConfigMapKeyRef.Key)
	}
	return nil, nil
}

// providers keeps each TargetSource's provider (and what it last returned) between syncs, while its
// fingerprint holds. Forgetting rule: an entry goes when its TargetSource is deleted, synced by another
// replica, or its fetch failed (the next sync starts afresh).
type providers struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]*providerEntry
}

// providerEntry is one TargetSource's provider and the last snapshot it returned, which an Unchanged answer
// stands for.
type providerEntry struct {
	fingerprint string
	provider    inventory.Provider
	last        *inventory.Snapshot
}

func (p *providers) get(key types.NamespacedName) *providerEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entries[key]
}

func (p *providers) set(key types.NamespacedName, e *providerEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.entries == nil {
		p.entries = map[types.NamespacedName]*providerEntry{}
	}
	p.entries[key] = e
}

func (p *providers) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.entries, key)
}
