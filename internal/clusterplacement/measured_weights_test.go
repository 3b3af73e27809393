package clusterplacement

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

func TestWeighByMeasuredStartsFromTheMeasuredWeightsStatusReportsElseTheDeclaredOnes(t *testing.T) {
	target := func(name string, declared int32, states map[string]v1alpha1.TargetClusterState) selection.SelectedTarget {
		return selection.SelectedTarget{Target: &v1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.TargetSpec{Weight: declared}, Status: v1alpha1.TargetStatus{ClusterStates: states}}}
	}
	measured := v1alpha1.TargetClusterState{Weight: 16, WeightSource: v1alpha1.WeightSourceMeasured, ResponseRate: "160"}
	sel := selection.Selection{Targets: []selection.SelectedTarget{
		target("spine", 2, map[string]v1alpha1.TargetClusterState{"fleet": measured}),
		target("other-cluster", 2, map[string]v1alpha1.TargetClusterState{"elsewhere": measured}),
		target("declared", 4, map[string]v1alpha1.TargetClusterState{"fleet": {Weight: 4, WeightSource: v1alpha1.WeightSourceDeclared}}),
		target("new", 0, nil),
	}}
	c := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "fleet"},
		Spec: v1alpha1.ClusterSpec{TargetDistribution: v1alpha1.TargetDistribution{WeighBy: v1alpha1.WeighByMeasured}}}
	want := Weights{Fill: placement.FillByWeight,
		Of:     map[string]int{"spine": 16, "other-cluster": 2, "declared": 4, "new": 1},
		Source: map[string]string{"spine": "Measured", "other-cluster": "Declared", "declared": "Declared", "new": "Declared"}}
	if got := Weigh(c, sel); !reflect.DeepEqual(got, want) {
		t.Fatalf("Weigh = %+v, want %+v", got, want)
	}

	c.Spec.TargetDistribution.WeighBy = v1alpha1.WeighByDeclared
	if got := Weigh(c, sel); got.Of["spine"] != 2 || got.Source["spine"] != "Declared" {
		t.Fatalf("by Declared, spine weighs %d (%s), want its declared 2", got.Of["spine"], got.Source["spine"])
	}
}
