package credentials

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// omittedTLSAnnotation on the Cluster's target TLS Secret fingerprints the TLS Secrets it could not hold, so
// that a change of them is reported once, not at every reconcile, and not again after an operator restart.
const omittedTLSAnnotation = "operator.gnmic.dev/omitted-tls-secrets"

// TargetTLS is the Cluster's target TLS Secret (<cluster>-target-tls): what it should hold, and what it held
// as the caches showed it when the reconcile began.
type TargetTLS struct {
	Bundle render.TLSBundle
	// seen is the Secret as the caches show it, nil when they have none.
	seen *corev1.Secret
}

// TargetTLS decides what the Cluster's target TLS Secret holds: the files of needed, the TLS Secrets of the
// selected targets' profiles, whose data secrets has (render.BundleTLS).
func (k *Keeper) TargetTLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, needed []string,
	secrets map[string]map[string][]byte) (TargetTLS, error) {
	seen, err := k.cachedTargetTLS(ctx, cluster)
	if err != nil {
		return TargetTLS{}, err
	}
	in := render.TLSBundleInput{Needed: needed, Secrets: secrets}
	if seen != nil {
		in.Current = seen.Data
	}
	return TargetTLS{Bundle: render.BundleTLS(in), seen: seen}, nil
}

// cachedTargetTLS reads the Cluster's target TLS Secret from the caches: its metadata from the cache of Secret
// metadata, its data through the content cache (Secrets), so that a steady Cluster reads nothing from the API
// server. The caches may lag the operator's own write; EnsureTargetTLS looks at the API server before it
// writes.
func (k *Keeper) cachedTargetTLS(ctx context.Context, cluster *operatorv1alpha1.Cluster) (*corev1.Secret, error) {
	name := workload.TargetTLSSecretName(cluster)
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := k.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, meta)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read metadata of secret %s: %w", name, err)
	}
	data, err := k.Secrets(ctx, cluster.Namespace, []string{name})
	if err != nil {
		return nil, err
	}
	files, ok := data[name]
	if !ok {
		return nil, nil
	}
	return &corev1.Secret{ObjectMeta: meta.ObjectMeta, Data: files}, nil
}

// EnsureTargetTLS writes the Cluster's target TLS Secret when it does not hold what it should: only then, so
// that a steady Cluster costs no write. A TLS Secret rotated, added or no longer needed changes this Secret's
// data, never the pod template: the kubelet brings the files to running pods. The TLS Secrets it cannot hold
// are reported once per change of them.
func (k *Keeper) EnsureTargetTLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, t TargetTLS) error {
	want := workload.TargetTLSSecret(cluster, t.Bundle.Files)
	mark := omittedMark(t.Bundle.Omitted)
	want.Annotations = owned.OwnerAnnotations("Cluster", cluster.Name)
	if mark != "" {
		want.Annotations[omittedTLSAnnotation] = mark
	}
	if err := controllerutil.SetControllerReference(cluster, want, k.Scheme); err != nil {
		return fmt.Errorf("own secret %s: %w", want.Name, err)
	}
	if t.seen != nil && holdsTargetTLS(t.seen, want, cluster) {
		return nil
	}

	logger := log.FromContext(ctx)
	have := &corev1.Secret{}
	err := k.Reader.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		logger.Info("creating", "kind", "Secret", "name", want.Name, "files", len(want.Data), "omitted", len(t.Bundle.Omitted))
		if err := k.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("create secret %s: %w", want.Name, err)
		}
		k.reportOmittedTLS(cluster, want.Name, "", mark, t.Bundle.Omitted)
		return nil
	case err != nil:
		return fmt.Errorf("read secret %s: %w", want.Name, err)
	}
	if err := owned.CheckClusterOwns(cluster, have, "Secret"); err != nil {
		return err
	}
	if holdsTargetTLS(have, want, cluster) {
		return nil
	}
	was := have.Annotations[omittedTLSAnnotation]
	have.Data = want.Data
	have.Labels = workload.Merged(have.Labels, want.Labels)
	have.Annotations = workload.Merged(have.Annotations, want.Annotations)
	if mark == "" {
		delete(have.Annotations, omittedTLSAnnotation)
	}
	have.OwnerReferences = want.OwnerReferences
	logger.Info("updating", "kind", "Secret", "name", want.Name, "files", len(want.Data), "omitted", len(t.Bundle.Omitted))
	if err := k.Client.Update(ctx, have); err != nil {
		return fmt.Errorf("update secret %s: %w", want.Name, err)
	}
	k.reportOmittedTLS(cluster, want.Name, was, mark, t.Bundle.Omitted)
	return nil
}

// holdsTargetTLS tells whether have, the Cluster's target TLS Secret, holds exactly the files of want, carries
// its label and omission mark, and is controlled by the Cluster. Labels and annotations others add do not
// count.
func holdsTargetTLS(have, want *corev1.Secret, cluster *operatorv1alpha1.Cluster) bool {
	return maps.EqualFunc(have.Data, want.Data, bytes.Equal) &&
		have.Labels[operatorv1alpha1.ClusterLabel] == cluster.Name &&
		have.Annotations[owned.OwnerAnnotation] == want.Annotations[owned.OwnerAnnotation] &&
		have.Annotations[omittedTLSAnnotation] == want.Annotations[omittedTLSAnnotation] &&
		metav1.IsControlledBy(have, cluster)
}

// reportOmittedTLS emits a warning when the TLS Secrets left out of the Cluster's target TLS Secret changed
// (was and now are their marks) and some are left out.
func (k *Keeper) reportOmittedTLS(cluster *operatorv1alpha1.Cluster, secret, was, now string, omitted map[string]error) {
	if now == "" || now == was {
		return
	}
	names := slices.Sorted(maps.Keys(omitted))
	quoted := make([]string, 0, len(names))
	for _, name := range names[:min(len(names), 5)] {
		quoted = append(quoted, fmt.Sprintf("%q", name))
	}
	if len(names) > 5 {
		quoted = append(quoted, fmt.Sprintf("and %d more", len(names)-5))
	}
	k.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventTargetTLSTooLarge,
		"the TLS files of %d Secret(s) do not fit in Secret %s, which holds at most 1 MiB for all targets; "+
			"their targets are skipped: %s", len(names), secret, strings.Join(quoted, ", "))
}

// omittedMark fingerprints the names of the omitted TLS Secrets: empty when none is, else their count and a
// hash of their names (a list of names could exceed what an annotation holds).
func omittedMark(omitted map[string]error) string {
	if len(omitted) == 0 {
		return ""
	}
	var parts [][]byte
	for _, name := range slices.Sorted(maps.Keys(omitted)) {
		parts = append(parts, []byte(name))
	}
	return fmt.Sprintf("%d/%s", len(omitted), fingerprintOf(parts...)[:16])
}
