package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// desiredHashAnnotation records the hash of what the operator last wrote into an owned object. A field the
// operator stops setting (a nodeSelector removed from the Cluster) is no longer in what it wants, so only a
// changed hash tells that the object must be rewritten; changes to what it sets, by hand or by another tool,
// are found by workload.Drift.
const desiredHashAnnotation = "operator.gnmic.dev/desired-hash"

// ensureWorkload makes the Cluster's target TLS Secret, StatefulSets (one, or one per domain), headless Service, bootstrap ConfigMap,
// NetworkPolicy and PodDisruptionBudget match the spec. The target TLS Secret comes first: the pods mount it,
// and the configuration pushed next points at its files.
func (r *ClusterReconciler) ensureWorkload(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	if err := r.credentials.EnsureTargetTLS(ctx, cluster, w.targetTLS); err != nil {
		return err
	}
	if err := r.ensureStatefulSets(ctx, cluster, w); err != nil {
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
	if err := r.ensureNetworkPolicy(ctx, cluster, w); err != nil {
		return err
	}
	if pdb := workload.PodDisruptionBudget(cluster); pdb != nil {
		return ensureOwned(ctx, r, cluster, pdb, &policyv1.PodDisruptionBudget{}, func(have, want *policyv1.PodDisruptionBudget) {
			have.Spec = want.Spec
		})
	}
	return r.deleteBudget(ctx, cluster)
}

// deleteBudget deletes the Cluster's PodDisruptionBudget when it has one and should not (one replica, or the
// budget disabled). Only a budget the cache holds is deleted: a delete on every reconcile would be a write
// each time.
func (r *ClusterReconciler) deleteBudget(ctx context.Context, cluster *operatorv1alpha1.Cluster) error {
	stale := &policyv1.PodDisruptionBudget{}
	err := r.Get(ctx, client.ObjectKeyFromObject(cluster), stale)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get pod disruption budget %s: %w", cluster.Name, err)
	}
	log.FromContext(ctx).Info("deleting", "kind", "PodDisruptionBudget", "name", stale.Name)
	if err := r.Delete(ctx, stale); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod disruption budget %s: %w", stale.Name, err)
	}
	return nil
}

// ensureOwned creates want, or updates the existing object through copySpec when what the operator wants
// changed since it last wrote it, or when the object drifted from it (kubectl scale, kubectl edit). An object
// that holds everything the operator sets costs no write, whatever the API server or other tools added.
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

	created, err := getOrCreate(ctx, r, want, have)
	if err != nil || created {
		return err
	}
	drift := workload.Drift(have, want)
	if len(drift) == 0 {
		return nil
	}
	logger := log.FromContext(ctx)
	if have.GetAnnotations()[desiredHashAnnotation] == hash {
		logger.Info("restoring what was changed by hand", "kind", kind, "name", want.GetName(), "fields", drift)
	} else {
		logger.Info("updating", "kind", kind, "name", want.GetName())
	}
	copySpec(have, want)
	have.SetLabels(workload.Merged(have.GetLabels(), want.GetLabels()))
	have.SetAnnotations(workload.Merged(have.GetAnnotations(), want.GetAnnotations()))
	have.SetOwnerReferences(want.GetOwnerReferences())
	if err := r.Update(ctx, have); err != nil {
		return fmt.Errorf("update %s %s: %w", kind, want.GetName(), err)
	}
	return nil
}

// getOrCreate reads the owned object into have from the cache, or creates want when there is none. An object
// that exists although the cache has none is read from the API server: the cache lags the operator's own
// create, and holds only objects with the Cluster label, so one whose label was removed by hand is restored
// rather than created again and again.
func getOrCreate[T client.Object](ctx context.Context, r *ClusterReconciler, want, have T) (created bool, err error) {
	kind, key := fmt.Sprintf("%T", want), client.ObjectKeyFromObject(want)
	err = r.Get(ctx, key, have)
	if !apierrors.IsNotFound(err) {
		if err != nil {
			return false, fmt.Errorf("get %s %s: %w", kind, key.Name, err)
		}
		return false, nil
	}
	log.FromContext(ctx).Info("creating", "kind", kind, "name", key.Name)
	err = r.Create(ctx, want)
	switch {
	case err == nil:
		return true, nil
	case !apierrors.IsAlreadyExists(err):
		return false, fmt.Errorf("create %s %s: %w", kind, key.Name, err)
	}
	if err := r.APIReader.Get(ctx, key, have); err != nil {
		return false, fmt.Errorf("get %s %s without the cluster label: %w", kind, key.Name, err)
	}
	return false, nil
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
