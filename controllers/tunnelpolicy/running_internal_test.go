package tunnelpolicy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func tunnelCluster(name string, collectors ...operatorv1alpha1.CollectorStatus) operatorv1alpha1.Cluster {
	c := operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Status.Collectors = collectors
	return c
}

func TestRunningSaysWhichClustersCollectorsIgnoreDialInDevices(t *testing.T) {
	old := operatorv1alpha1.CollectorStatus{Pod: "edge-1", AnswersAs: "0.44.0 to 0.46.x",
		MissingFeatures: []string{"tunnel-target-matches"}}
	fine := operatorv1alpha1.CollectorStatus{Pod: "edge-0", AnswersAs: "0.47.0 or newer"}
	for _, tt := range []struct {
		name       string
		applies    []string
		clusters   []operatorv1alpha1.Cluster
		want       metav1.ConditionStatus
		wantReason string
		mentions   []string
	}{
		{"no Cluster: no condition", nil, []operatorv1alpha1.Cluster{tunnelCluster("edge", old)}, "", "", nil},
		{"a pod too old", []string{"edge"}, []operatorv1alpha1.Cluster{tunnelCluster("edge", fine, old)},
			metav1.ConditionFalse, operatorv1alpha1.ReasonCollectorTooOld, []string{"Cluster edge", "edge-1", "0.44.0 to 0.46.x", "0.47.0"}},
		{"an old pod of a Cluster it does not apply to", []string{"core"},
			[]operatorv1alpha1.Cluster{tunnelCluster("edge", old), tunnelCluster("core", fine)},
			metav1.ConditionTrue, operatorv1alpha1.ReasonRunningOnCollectors, []string{"core"}},
		{"every pod fine", []string{"edge"}, []operatorv1alpha1.Cluster{tunnelCluster("edge", fine)},
			metav1.ConditionTrue, operatorv1alpha1.ReasonRunningOnCollectors, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &operatorv1alpha1.TunnelTargetPolicy{}
			p.Status.Clusters = tt.applies
			meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionRunning,
				Status: metav1.ConditionUnknown, Reason: "Before"})
			setRunning(p, tt.clusters)
			c := meta.FindStatusCondition(p.Status.Conditions, operatorv1alpha1.ConditionRunning)
			if tt.want == "" {
				if c != nil {
					t.Fatalf("Running = %+v, want none", c)
				}
				return
			}
			if c == nil || c.Status != tt.want || c.Reason != tt.wantReason {
				t.Fatalf("Running = %+v, want %s %s", c, tt.want, tt.wantReason)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(c.Message, m) {
					t.Errorf("message %q does not mention %q", c.Message, m)
				}
			}
		})
	}
}
