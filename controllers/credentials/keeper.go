package credentials

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// Keeper keeps the Secrets the operator writes for a Cluster, each owned by the Cluster, carrying its label and
// written only when what it holds must change (OperatorSecret, APITLS, EnsureTargetTLS), and reads the
// Secrets that the Cluster's targets, Outputs and Inputs use (Secrets).
//
// What it remembers: the operator's client TLS configuration per Cluster (Forget drops a Cluster's) and the
// contents of the Secrets read, by resourceVersion (SecretReader).
type Keeper struct {
	// Client writes the Secrets, and reads Secrets' metadata from the manager's cache.
	Client client.Client
	// Reader reads the API server, Secrets' data through its content cache.
	Reader   *SecretReader
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	clientTLS clientTLSCache
}

// Secrets gives the data of the named Secrets of the namespace, leaving out those that do not exist: rendering
// skips what needs a missing one and says so.
func (k *Keeper) Secrets(ctx context.Context, namespace string, names []string) (map[string]map[string][]byte, error) {
	return k.Reader.Secrets(ctx, namespace, names)
}

// Forget drops what the keeper remembers of a Cluster this replica no longer reconciles: its client TLS
// configuration.
func (k *Keeper) Forget(cluster types.NamespacedName) { k.clientTLS.forget(cluster) }

func (k *Keeper) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// ensureSecret keeps an owned Secret whose data change fills or renews, and returns its data, which callers
// must not modify. change first sees the data as the Secret content cache holds it (secrets.go): while
// it reports no change, which is every reconcile but a Secret's first and its renewals, the API server is not
// asked at all. Otherwise the Secret is read from the API server, changed again and written, and the written
// data is remembered at its new resourceVersion.
func (k *Keeper) ensureSecret(ctx context.Context, cluster *operatorv1alpha1.Cluster, name string,
	change func(map[string][]byte) (bool, error)) (map[string][]byte, error) {
	cached, found, err := k.ownSecretData(ctx, cluster, name)
	if err != nil {
		return nil, err
	}
	if found {
		changed, err := change(maps.Clone(cached))
		if err != nil {
			return nil, fmt.Errorf("fill secret %s: %w", name, err)
		}
		if !changed {
			return cached, nil
		}
	}
	secret := &corev1.Secret{}
	err = k.Reader.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, secret)
	exists := err == nil
	switch {
	case exists:
		if err := owned.CheckClusterOwns(cluster, secret, "Secret"); err != nil {
			return nil, err
		}
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster.Namespace,
			Labels: workload.Labels(cluster)}, Type: corev1.SecretTypeOpaque}
	case err != nil:
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	changed, err := change(secret.Data)
	if err != nil {
		return nil, fmt.Errorf("fill secret %s: %w", name, err)
	}
	if !changed {
		return secret.Data, nil
	}
	if err := controllerutil.SetControllerReference(cluster, secret, k.Scheme); err != nil {
		return nil, fmt.Errorf("own secret %s: %w", name, err)
	}
	// The label marks the Secret as the operator's: config/rbac/operator_writes_policy.yaml lets it write no other.
	secret.Labels = workload.Merged(secret.Labels, workload.Labels(cluster))
	secret.Annotations = workload.Merged(secret.Annotations, owned.OwnerAnnotations("Cluster", cluster.Name))
	if exists {
		log.FromContext(ctx).Info("renewing", "secret", name)
		err = k.Client.Update(ctx, secret)
	} else {
		log.FromContext(ctx).Info("creating", "secret", name)
		err = k.Client.Create(ctx, secret)
	}
	if err != nil {
		return nil, fmt.Errorf("write secret %s: %w", name, err)
	}
	k.Reader.contents.remember(client.ObjectKeyFromObject(secret), secret.ResourceVersion, secret.Data)
	return secret.Data, nil
}

// ownSecretData is the data of one of the Cluster's own Secrets through the Secret content cache; found is
// false when the cache has none, and the caller then asks the API server. A Secret of the name that is not the
// Cluster's is a NameTakenError: its data is not read.
func (k *Keeper) ownSecretData(ctx context.Context, cluster *operatorv1alpha1.Cluster, name string) (data map[string][]byte, found bool, err error) {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	switch err := k.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, meta); {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read metadata of secret %s: %w", name, err)
	}
	if err := owned.CheckClusterOwns(cluster, meta, "Secret"); err != nil {
		return nil, false, err
	}
	secrets, err := k.Reader.Secrets(ctx, cluster.Namespace, []string{name})
	if err != nil {
		return nil, false, err
	}
	data, found = secrets[name]
	return data, found, nil
}
