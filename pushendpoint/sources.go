package pushendpoint

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
)

// The owner of a snapshot's ConfigMap.
var (
	ownerAPIVersion = operatorv1alpha1.GroupVersion.String()
	ownerKind       = "TargetSource"
)

// defaultKeyField is spec.push.keyField's default, for a TargetSource stored before the field existed.
const defaultKeyField = "name"

// kubeSources finds TargetSources in the manager's cache and reads their Secret from the API server (the
// operator caches no Secret data).
type kubeSources struct {
	cache  client.Reader
	reader client.Reader
	// namespaces the operator watches; empty: every one. A TargetSource elsewhere is not found.
	namespaces []string
	// maxBody caps each TargetSource's spec.push.maxBodyBytes.
	maxBody int64
}

func (k *kubeSources) find(ctx context.Context, key types.NamespacedName) (Source, error) {
	if len(k.namespaces) > 0 && !slices.Contains(k.namespaces, key.Namespace) {
		return Source{}, errUnknownSource
	}
	ts := &operatorv1alpha1.TargetSource{}
	if err := k.cache.Get(ctx, key, ts); err != nil {
		if apierrors.IsNotFound(err) {
			return Source{}, errUnknownSource
		}
		return Source{}, fmt.Errorf("get TargetSource %s: %w", key, err)
	}
	src := Source{Namespace: ts.Namespace, Name: ts.Name, UID: ts.UID, object: ts}
	spec := ts.Spec.Push
	if spec == nil {
		return src, fmt.Errorf("%w: TargetSource %s takes its records from another provider (spec.push is not set)", errNotPush, key)
	}
	src.KeyField = spec.KeyField
	if src.KeyField == "" {
		src.KeyField = defaultKeyField
	}
	src.MaxRecords = int(ts.Spec.Sync.MaxRecords)
	src.MaxBodyBytes = k.maxBody
	if spec.MaxBodyBytes > 0 && spec.MaxBodyBytes < k.maxBody {
		src.MaxBodyBytes = spec.MaxBodyBytes
	}
	ref := spec.Auth.BearerTokenRef
	src.Credential.Scheme = push.Bearer
	if spec.Auth.HMACSecretRef != nil {
		ref, src.Credential.Scheme = spec.Auth.HMACSecretRef, push.HMACSHA256
	}
	if ref == nil {
		return src, fmt.Errorf("%w: spec.push.auth names no Secret", errNoCredential)
	}
	secret := &corev1.Secret{}
	if err := k.reader.Get(ctx, types.NamespacedName{Namespace: ts.Namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return src, fmt.Errorf("%w: Secret %s not found", errNoCredential, ref.Name)
		}
		return src, fmt.Errorf("get Secret %s/%s: %w", ts.Namespace, ref.Name, err)
	}
	// Surrounding white space (a file's final newline) is not part of the secret, as for the pull side's token.
	value := strings.TrimSpace(string(secret.Data[ref.Key]))
	if value == "" {
		return src, fmt.Errorf("%w: Secret %s has no key %s, or it is empty", errNoCredential, ref.Name, ref.Key)
	}
	src.Credential.Secret = []byte(value)
	return src, nil
}
