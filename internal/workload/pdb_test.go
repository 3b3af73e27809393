package workload

import (
	"reflect"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestPodDisruptionBudget(t *testing.T) {
	one, half := intstr.FromInt32(1), intstr.FromString("50%")
	two := intstr.FromInt32(2)
	budget := func(b v1alpha1.PodDisruptionBudgetSpec) func(*v1alpha1.Cluster) {
		return func(c *v1alpha1.Cluster) { c.Spec.PodDisruptionBudget = b }
	}
	tests := []struct {
		name               string
		cluster            *v1alpha1.Cluster
		wantNil            bool
		wantMaxUnavailable *intstr.IntOrString
		wantMinAvailable   *intstr.IntOrString
	}{
		{name: "keeps none for the default single replica", cluster: cluster(), wantNil: true},
		{name: "keeps none for one replica", cluster: cluster(withReplicas(1)), wantNil: true},
		{name: "keeps none for zero replicas", cluster: cluster(withReplicas(0)), wantNil: true},
		{name: "keeps none when disabled", cluster: cluster(withReplicas(3), budget(v1alpha1.PodDisruptionBudgetSpec{Enabled: ptr(false)})), wantNil: true},
		{name: "allows one unavailable pod by default", cluster: cluster(withReplicas(2)), wantMaxUnavailable: &one},
		{name: "keeps one when enabled explicitly", cluster: cluster(withReplicas(3), budget(v1alpha1.PodDisruptionBudgetSpec{Enabled: ptr(true)})), wantMaxUnavailable: &one},
		{name: "takes maxUnavailable from the spec", cluster: cluster(withReplicas(4), budget(v1alpha1.PodDisruptionBudgetSpec{MaxUnavailable: &half})), wantMaxUnavailable: &half},
		{name: "takes minAvailable from the spec", cluster: cluster(withReplicas(4), budget(v1alpha1.PodDisruptionBudgetSpec{MinAvailable: &two})), wantMinAvailable: &two},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdb := PodDisruptionBudget(tt.cluster)
			if tt.wantNil {
				if pdb != nil {
					t.Fatalf("PodDisruptionBudget = %+v, want none", pdb.Spec)
				}
				return
			}
			if pdb == nil {
				t.Fatal("PodDisruptionBudget = nil, want one")
			}
			if !reflect.DeepEqual(pdb.Spec.MaxUnavailable, tt.wantMaxUnavailable) || !reflect.DeepEqual(pdb.Spec.MinAvailable, tt.wantMinAvailable) {
				t.Fatalf("budget = maxUnavailable %v, minAvailable %v; want %v, %v", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable, tt.wantMaxUnavailable, tt.wantMinAvailable)
			}
			if pdb.Name != "c" || pdb.Namespace != "ns" || !reflect.DeepEqual(pdb.Spec.Selector.MatchLabels, Labels(tt.cluster)) {
				t.Fatalf("budget %s/%s selects %v, want c/ns selecting the cluster's pods", pdb.Namespace, pdb.Name, pdb.Spec.Selector)
			}
			if pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
				t.Fatalf("unhealthy pods cannot always be evicted: %v", pdb.Spec.UnhealthyPodEvictionPolicy)
			}
		})
	}
}
