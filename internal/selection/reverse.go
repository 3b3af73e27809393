package selection

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// ClustersSelecting returns the sorted names of the Clusters whose enabled
// pipelines select the object of kind called name with objectLabels, by
// reference or by selector. pipelines are those of the object's namespace.
//
// It is meant for watch mappers. A mapper that is given both the old and the
// new version of an object (controller-runtime does so on updates) also
// catches the Clusters that stop selecting it. Invalid selectors match
// nothing here; Resolve reports them. The answer errs on the side of too many
// Clusters: a target picked by a pipeline without subscriptions still counts.
func ClustersSelecting(kind Kind, name string, objectLabels map[string]string, pipelines []v1alpha1.Pipeline) []string {
	var clusters []string
	set := labels.Set(objectLabels)
	for i := range pipelines {
		p := &pipelines[i]
		if enabled(p) && selects(choiceOf(p, kind), name, set) {
			clusters = append(clusters, p.Spec.ClusterRef)
		}
	}
	slices.Sort(clusters)
	return slices.Compact(clusters)
}

// ClustersUsingProfile returns the sorted names of the Clusters that select a
// target whose spec.profile is profile, among targets and pipelines of the
// profile's namespace: the Clusters to reconcile when a TargetProfile changes.
func ClustersUsingProfile(profile string, targets []v1alpha1.Target, pipelines []v1alpha1.Pipeline) []string {
	var clusters []string
	for i := range targets {
		if t := &targets[i]; t.Spec.Profile == profile {
			clusters = append(clusters, ClustersSelecting(KindTarget, t.Name, t.Labels, pipelines)...)
		}
	}
	slices.Sort(clusters)
	return slices.Compact(clusters)
}

func selects(c choice, name string, set labels.Set) bool {
	if slices.Contains(c.refs, name) {
		return true
	}
	for i := range c.selectors {
		sel, err := metav1.LabelSelectorAsSelector(&c.selectors[i])
		if err == nil && sel.Matches(set) {
			return true
		}
	}
	return false
}
