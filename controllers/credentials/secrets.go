package credentials

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretReader reads the API server, and reads the Secrets that targets use through a content cache. The operator caches Secrets' metadata only (a namespace's Secrets would otherwise
// fill its memory); a Secret's data is read from the API server only when the metadata cache shows a
// resourceVersion other than the one it was last read at, so a steady fleet reads no Secret at all. Every
// other read (Get, List) goes to the API server unchanged: the operator's own TLS Secrets are read that way,
// to see its writes at once.
type SecretReader struct {
	client.Reader
	// metadata reads the cache of Secret metadata.
	metadata client.Reader
	contents secretContents
}

// secretContents remembers the data of the Secrets read, each with the resourceVersion it was read at.
//
// Invariant: data is served only for the exact resourceVersion it was read at. Entries of Secrets the
// metadata cache no longer has are dropped, so the memory holds only Secrets that exist and were asked for.
type secretContents struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]secretContent
}

type secretContent struct {
	resourceVersion string
	data            map[string][]byte
}

// NewSecretReader reads the API server through live, and Secrets' metadata from metadata (the cache of their
// metadata that the manager keeps).
func NewSecretReader(live, metadata client.Reader) *SecretReader {
	return &SecretReader{Reader: live, metadata: metadata}
}

// Secrets gives the data of the named Secrets of the namespace, leaving out those that do not exist.
func (r *SecretReader) Secrets(ctx context.Context, namespace string, names []string) (map[string]map[string][]byte, error) {
	c := &r.contents
	out := make(map[string]map[string][]byte, len(names))
	for _, name := range names {
		key := types.NamespacedName{Namespace: namespace, Name: name}
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := r.metadata.Get(ctx, key, meta)
		switch {
		case apierrors.IsNotFound(err):
			// The metadata watch wakes the Cluster when the Secret appears.
			c.forget(key)
			continue
		case err != nil:
			return nil, fmt.Errorf("read metadata of secret %s: %w", name, err)
		}
		if data, ok := c.at(key, meta.ResourceVersion); ok {
			out[name] = data
			continue
		}
		var s corev1.Secret
		err = r.Get(ctx, key, &s)
		switch {
		case apierrors.IsNotFound(err):
			c.forget(key)
			continue
		case err != nil:
			return nil, fmt.Errorf("read secret %s: %w", name, err)
		}
		c.remember(key, s.ResourceVersion, s.Data)
		out[name] = s.Data
	}
	return out, nil
}

// at is the remembered data of the Secret when it was read at resourceVersion.
func (c *secretContents) at(key types.NamespacedName, resourceVersion string) (map[string][]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.resourceVersion != resourceVersion {
		return nil, false
	}
	return e.data, true
}

func (c *secretContents) remember(key types.NamespacedName, resourceVersion string, data map[string][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[types.NamespacedName]secretContent{}
	}
	c.entries[key] = secretContent{resourceVersion: resourceVersion, data: data}
}

func (c *secretContents) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}
