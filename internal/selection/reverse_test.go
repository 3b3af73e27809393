package selection

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestClustersSelecting(t *testing.T) {
	pipelines := []v1alpha1.Pipeline{
		pipeline("by-ref", v1alpha1.PipelineSpec{ClusterRef: "c1", TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"s1"}}),
		pipeline("by-label", v1alpha1.PipelineSpec{
			ClusterRef: "c2", TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"s1"},
			Outputs: &v1alpha1.OutputSelection{OutputSelectors: match(map[string]string{"tier": "hot"})},
			Inputs:  &v1alpha1.InputSelection{InputRefs: []string{"bus"}},
		}),
		pipeline("same-cluster", v1alpha1.PipelineSpec{ClusterRef: "c1", TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"s1"}}),
		pipeline("disabled", v1alpha1.PipelineSpec{ClusterRef: "c3", Enabled: ptr(false), TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"s1"}}),
		pipeline("broken", v1alpha1.PipelineSpec{ClusterRef: "c4", TargetSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "dc", Operator: "Near"}}}}}),
	}
	tests := []struct {
		name   string
		kind   Kind
		object string
		labels map[string]string
		want   []string
	}{
		{"finds the cluster of a pipeline that references the target", KindTarget, "r1", nil, []string{"c1"}},
		{"finds every cluster once whose pipelines select the target by label", KindTarget, "r7", map[string]string{"dc": "dc1"}, []string{"c1", "c2"}},
		{"combines references and labels", KindTarget, "r1", map[string]string{"dc": "dc1"}, []string{"c1", "c2"}},
		{"finds no cluster for a target nobody selects", KindTarget, "r8", map[string]string{"dc": "dc2"}, nil},
		{"ignores disabled pipelines", KindTarget, "r1", nil, []string{"c1"}},
		{"finds the clusters of a subscription", KindSubscription, "s1", nil, []string{"c1", "c2"}},
		{"finds the cluster of an output selected by label", KindOutput, "kafka", map[string]string{"tier": "hot"}, []string{"c2"}},
		{"finds the cluster of an input selected by reference", KindInput, "bus", nil, []string{"c2"}},
		{"does not confuse kinds: a target name is not an input reference", KindInput, "r1", nil, nil},
		{"selects nothing for an unknown kind", Kind("Processor"), "r1", map[string]string{"dc": "dc1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClustersSelecting(tt.kind, tt.object, tt.labels, pipelines); !slices.Equal(got, tt.want) {
				t.Fatalf("ClustersSelecting(%s, %q) = %v, want %v", tt.kind, tt.object, got, tt.want)
			}
		})
	}
}

func TestClustersUsingProfile(t *testing.T) {
	targets := []v1alpha1.Target{target("r1", nil), target("r2", map[string]string{"dc": "dc1"}), target("r3", nil)}
	targets[2].Spec.Profile = "other"
	pipelines := []v1alpha1.Pipeline{
		pipeline("p1", v1alpha1.PipelineSpec{ClusterRef: "c1", TargetRefs: []string{"r1"}, SubscriptionRefs: []string{"s"}}),
		pipeline("p2", v1alpha1.PipelineSpec{ClusterRef: "c2", TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"s"}}),
		pipeline("p3", v1alpha1.PipelineSpec{ClusterRef: "c3", TargetRefs: []string{"r3"}, SubscriptionRefs: []string{"s"}}),
	}
	tests := []struct {
		name    string
		profile string
		want    []string
	}{
		{"finds the clusters selecting any target of the profile", "default", []string{"c1", "c2"}},
		{"finds only the clusters of the profile's targets", "other", []string{"c3"}},
		{"finds nothing for a profile no target names", "unused", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClustersUsingProfile(tt.profile, targets, pipelines); !slices.Equal(got, tt.want) {
				t.Fatalf("ClustersUsingProfile(%q) = %v, want %v", tt.profile, got, tt.want)
			}
		})
	}
}
