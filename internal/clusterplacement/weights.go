package clusterplacement

import (
	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// Weights is what each target of a Cluster weighs in its placement, and so how its pods are filled.
// The zero value is placement by count: every target weighs 1 and the pods fill by name, exactly as before
// targets had weights.
type Weights struct {
	// Fill is how placement fills the pods: FillByName by count, FillByWeight otherwise.
	Fill placement.Fill
	// Of maps a target's name to its weight, from 1 to v1alpha1's maximum. A target not in it weighs 1; by
	// count it is nil.
	Of map[string]int
	// Source maps a target's name to where its weight comes from (v1alpha1.WeightSourceDeclared), as its
	// status.clusterStates[].weightSource says. Nil by count.
	Source map[string]string
}

// Weigh reads what the Cluster's selected targets weigh: by count (spec.targetDistribution.weighBy Count or
// unset) the zero Weights, declared (Declared) each Target's spec.weight. Measured: the weight the Target's
// status reports as measured for the Cluster, else the declared one; the reconciler then weighs with what it
// measures now (controllers/cluster/measure.go), and a plan of the live Cluster sees what it placed by.
func Weigh(c *v1alpha1.Cluster, sel selection.Selection) Weights {
	by := c.Spec.TargetDistribution.WeighBy
	if by != v1alpha1.WeighByDeclared && by != v1alpha1.WeighByMeasured {
		return Weights{}
	}
	w := Weights{Fill: placement.FillByWeight, Of: make(map[string]int, len(sel.Targets)),
		Source: make(map[string]string, len(sel.Targets))}
	for _, st := range sel.Targets {
		w.Of[st.Target.Name] = DeclaredWeight(st.Target)
		w.Source[st.Target.Name] = v1alpha1.WeightSourceDeclared
		if by != v1alpha1.WeighByMeasured {
			continue
		}
		if rep := st.Target.Status.ClusterStates[c.Name]; rep.WeightSource == v1alpha1.WeightSourceMeasured && rep.Weight > 0 {
			w.Of[st.Target.Name], w.Source[st.Target.Name] = int(rep.Weight), v1alpha1.WeightSourceMeasured
		}
	}
	return w
}

// DeclaredWeight is the Target's spec.weight, 1 when unset (a Target read without the CRD's defaulting).
func DeclaredWeight(t *v1alpha1.Target) int {
	if t.Spec.Weight < 1 {
		return 1
	}
	return int(t.Spec.Weight)
}

// Weighed tells whether the targets weigh more than their count: whether their weights and units belong in
// their statuses.
func (w Weights) Weighed() bool { return w.Of != nil }

// Weight is what the named target weighs: 1 unless Of says otherwise.
func (w Weights) Weight(name string) int {
	if v, ok := w.Of[name]; ok {
		return v
	}
	return 1
}

// Units is the total weight of the named targets: their number when they weigh by count.
func (w Weights) Units(names []string) int {
	units := 0
	for _, name := range names {
		units += w.Weight(name)
	}
	return units
}
