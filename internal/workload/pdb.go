package workload

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// PodDisruptionBudget bounds voluntary disruptions of the collector pods of
// c. It is nil, and the reconciler deletes any existing one, when the Cluster
// has at most one replica (a budget would block node drains for good) or when
// spec.podDisruptionBudget.enabled is false. The budget is
// spec.podDisruptionBudget.maxUnavailable, else its minAvailable, else
// maxUnavailable 1. Unhealthy pods may always be evicted: a collector that is
// not ready collects nothing worth protecting, and keeping it would stall
// drains.
func PodDisruptionBudget(c *v1alpha1.Cluster) *policyv1.PodDisruptionBudget {
	spec := c.Spec.PodDisruptionBudget
	if Replicas(c) <= 1 || (spec.Enabled != nil && !*spec.Enabled) {
		return nil
	}
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: objectMeta(c),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:                   &metav1.LabelSelector{MatchLabels: Labels(c)},
			UnhealthyPodEvictionPolicy: ptr(policyv1.AlwaysAllow),
		},
	}
	switch {
	case spec.MaxUnavailable != nil:
		pdb.Spec.MaxUnavailable = ptr(*spec.MaxUnavailable)
	case spec.MinAvailable != nil:
		pdb.Spec.MinAvailable = ptr(*spec.MinAvailable)
	default:
		pdb.Spec.MaxUnavailable = ptr(intstr.FromInt32(1))
	}
	return pdb
}
