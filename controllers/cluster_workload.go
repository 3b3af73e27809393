package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// desiredHashAnnotation records the hash of what the operator last wrote into an owned object, so that an
// unchanged Cluster costs no write (the API server's defaulting makes a field-by-field comparison useless).
const desiredHashAnnotation = "operator.gnmic.dev/desired-hash"

// ensureWorkload makes the Cluster's StatefulSet, headless Service, bootstrap ConfigMap and
// PodDisruptionBudget match the spec.
func (r *ClusterReconciler) ensureWorkload(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	sts := workload.StatefulSet(cluster, workload.Options{TargetTLSSecrets: w.tlsSecrets})
	if w.apiTLS != nil {
		sts.Spec.Template.Annotations[APITLSChecksumAnnotation] = w.apiTLS.checksum
	}
	if err := ensureOwned(ctx, r, cluster, sts, &appsv1.StatefulSet{}, func(have, want *appsv1.StatefulSet) {
		have.Spec = want.Spec
	}); err != nil {
		return err
	}
	if err := ensureOwned(ctx, r, cluster, workload.HeadlessService(cluster), &corev1.Service{}, func(have, want *corev1.Service) {
		// clusterIP and ipFamilies are allocated by the API server: keep them.
		want.Spec.ClusterIP, want.Spec.ClusterIPs = have.Spec.ClusterIP, have.Spec.ClusterIPs
		want.Spec.IPFamilies, want.Spec.IPFamilyPolicy = have.Spec.IPFamilies, have.Spec.IPFamilyPolicy
		have.Spec = want.Spec
	}); err != nil {
		return err
	}
	if err := ensureOwned(ctx, r, cluster, workload.BootstrapConfigMap(cluster), &corev1.ConfigMap{}, func(have, want *corev1.ConfigMap) {
		have.Data = want.Data
	}); err != nil {
		return err
	}
	if pdb := workload.PodDisruptionBudget(cluster); pdb != nil {
		return ensureOwned(ctx, r, cluster, pdb, &policyv1.PodDisruptionBudget{}, func(have, want *policyv1.PodDisruptionBudget) {
			have.Spec = want.Spec
		})
	}
	stale := &policyv1.PodDisruptionBudget{}
	stale.Name, stale.Namespace = cluster.Name, cluster.Namespace
	if err := r.Delete(ctx, stale); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod disruption budget %s: %w", stale.Name, err)
	}
	return nil
}

// ensureOwned creates want, or updates the existing object through copy when what the operator wants
// changed since it last wrote it.
func ensureOwned[T client.Object](ctx context.Context, r *ClusterReconciler, owner *operatorv1alpha1.Cluster, want, have T, copySpec func(have, want T)) error {
	kind := fmt.Sprintf("%T", want)
	if err := controllerutil.SetControllerReference(owner, want, r.Scheme); err != nil {
		return fmt.Errorf("own %s %s: %w", kind, want.GetName(), err)
	}
	hash, err := desiredHash(want)
	if err != nil {
		return fmt.Errorf("hash %s %s: %w", kind, want.GetName(), err)
	}
	annotate(want, hash)

	err = r.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		log.FromContext(ctx).Info("creating", "kind", kind, "name", want.GetName())
		if err := r.Create(ctx, want); err != nil {
			return fmt.Errorf("create %s %s: %w", kind, want.GetName(), err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("get %s %s: %w", kind, want.GetName(), err)
	}
	if have.GetAnnotations()[desiredHashAnnotation] == hash {
		return nil
	}
	copySpec(have, want)
	have.SetLabels(want.GetLabels())
	annotations := have.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for k, v := range want.GetAnnotations() {
		annotations[k] = v
	}
	have.SetAnnotations(annotations)
	have.SetOwnerReferences(want.GetOwnerReferences())
	log.FromContext(ctx).Info("updating", "kind", kind, "name", want.GetName())
	if err := r.Update(ctx, have); err != nil {
		return fmt.Errorf("update %s %s: %w", kind, want.GetName(), err)
	}
	return nil
}

func desiredHash(obj client.Object) (string, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12]), nil
}

func annotate(obj client.Object, hash string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[desiredHashAnnotation] = hash
	obj.SetAnnotations(annotations)
}
