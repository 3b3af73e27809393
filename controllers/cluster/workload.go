package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// ensureWorkload makes the Cluster's target TLS Secret, StatefulSets (one, or one per domain), headless Service, bootstrap ConfigMap,
// NetworkPolicy, the Services (and ServiceMonitors) of its prometheus outputs and of its gNMI server, and
// PodDisruptionBudget match the spec. The target TLS Secret and the bootstrap ConfigMap come first: the pods
// mount them, and the configuration pushed next points at the Secret's files. An object whose name someone
// else holds is left as it is and recorded in w.taken; the others are still made, but for the StatefulSets
// while an object their pods mount is someone else's (the pods would mount it).
func (r *Reconciler) ensureWorkload(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	taken := &w.taken
	if err := taken.Keep(r.credentials.EnsureTargetTLS(ctx, cluster, w.targetTLS)); err != nil {
		return err
	}
	if err := taken.Keep(owned.Ensure(ctx, r.owned, cluster, workload.BootstrapConfigMap(cluster), &corev1.ConfigMap{}, func(have, want *corev1.ConfigMap) {
		have.Data = want.Data
	})); err != nil {
		return err
	}
	if len(taken.Names()) == 0 {
		if err := taken.Keep(r.ensureStatefulSets(ctx, cluster, w)); err != nil {
			return err
		}
	}
	if err := taken.Keep(owned.Ensure(ctx, r.owned, cluster, workload.HeadlessService(cluster), &corev1.Service{}, func(have, want *corev1.Service) {
		// clusterIP and ipFamilies are allocated by the API server: keep them.
		want.Spec.ClusterIP, want.Spec.ClusterIPs = have.Spec.ClusterIP, have.Spec.ClusterIPs
		want.Spec.IPFamilies, want.Spec.IPFamilyPolicy = have.Spec.IPFamilies, have.Spec.IPFamilyPolicy
		have.Spec = want.Spec
	})); err != nil {
		return err
	}
	if err := taken.Keep(r.ensureNetworkPolicy(ctx, cluster, w)); err != nil {
		return err
	}
	if err := r.ensureOutputServices(ctx, cluster, w); err != nil {
		return err
	}
	if err := taken.Keep(r.ensureGNMIServer(ctx, cluster)); err != nil {
		return err
	}
	if err := taken.Keep(r.ensureTunnelService(ctx, cluster)); err != nil {
		return err
	}
	if pdb := workload.PodDisruptionBudget(cluster); pdb != nil {
		return taken.Keep(owned.Ensure(ctx, r.owned, cluster, pdb, &policyv1.PodDisruptionBudget{}, func(have, want *policyv1.PodDisruptionBudget) {
			have.Spec = want.Spec
		}))
	}
	// One replica, or the budget disabled.
	return owned.Delete(ctx, r.owned, cluster, "PodDisruptionBudget", client.ObjectKeyFromObject(cluster), &policyv1.PodDisruptionBudget{})
}
