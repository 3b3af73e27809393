package owned

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestHolderOf(t *testing.T) {
	owner := &metav1.ObjectMeta{Name: "db", UID: "new"}
	ref := func(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "old", Controller: ptr.To(controller)}
	}
	ours := operatorv1alpha1.GroupVersion.String()
	for _, tc := range []struct {
		name        string
		refs        []metav1.OwnerReference
		labels      map[string]string
		annotations map[string]string
		want        string
	}{
		{name: "controlled by the Cluster of that name, whatever its UID", refs: []metav1.OwnerReference{ref(ours, "Cluster", "db", true)}},
		{name: "controlled by the Cluster in another version of the group", refs: []metav1.OwnerReference{ref("operator.gnmic.dev/v1", "Cluster", "db", true)}},
		{name: "controlled by another Cluster", refs: []metav1.OwnerReference{ref(ours, "Cluster", "db-zone", true)},
			want: "controlled by Cluster db-zone"},
		{name: "controlled by a Cluster kind of another group", refs: []metav1.OwnerReference{ref("cluster.x-k8s.io/v1beta1", "Cluster", "db", true)},
			want: "controlled by Cluster db"},
		{name: "controlled by a TargetSource of the name", refs: []metav1.OwnerReference{ref(ours, "TargetSource", "db", true)},
			want: "controlled by TargetSource db"},
		{name: "controlled by a Deployment, annotated for the Cluster all the same",
			refs: []metav1.OwnerReference{ref("apps/v1", "Deployment", "db", true)}, annotations: map[string]string{OwnerAnnotation: "Cluster/db"},
			want: "controlled by Deployment db"},
		{name: "an owner that is no controller does not make it the Cluster's",
			refs: []metav1.OwnerReference{ref(ours, "Cluster", "db", false)}, want: "not made by the operator"},
		{name: "nothing at all", want: "not made by the operator"},
		{name: "the Cluster's label only: anyone can copy a label", labels: map[string]string{operatorv1alpha1.ClusterLabel: "db"},
			want: "not made by the operator"},
		{name: "handed over by its annotation", annotations: map[string]string{OwnerAnnotation: "Cluster/db"}},
		{name: "handed to another Cluster", annotations: map[string]string{OwnerAnnotation: "Cluster/web"},
			want: "annotated " + OwnerAnnotation + "=Cluster/web"},
		{name: "handed to a TargetSource of the name", annotations: map[string]string{OwnerAnnotation: "TargetSource/db"},
			want: "annotated " + OwnerAnnotation + "=TargetSource/db"},
		{name: "made by an earlier release, reference removed by hand",
			labels: map[string]string{operatorv1alpha1.ClusterLabel: "db"}, annotations: map[string]string{desiredHashAnnotation: "abc"}},
		{name: "made by an earlier release for another Cluster",
			labels: map[string]string{operatorv1alpha1.ClusterLabel: "web"}, annotations: map[string]string{desiredHashAnnotation: "abc"},
			want: "not made by the operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := &metav1.ObjectMeta{Name: "db", OwnerReferences: tc.refs, Labels: tc.labels, Annotations: tc.annotations}
			if got := HolderOf("Cluster", operatorv1alpha1.ClusterLabel, owner, have); got != tc.want {
				t.Errorf("HolderOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTakenKeepsNameTakenAndPassesTheRest(t *testing.T) {
	var taken Taken
	if err := taken.Keep(nil); err != nil {
		t.Fatalf("Keep(nil) = %v", err)
	}
	other := errors.New("apiserver down")
	if err := taken.Keep(fmt.Errorf("ensure: %w", other)); !errors.Is(err, other) {
		t.Fatalf("Keep passed %v on, want the wrapped error", err)
	}
	for _, n := range []NameTakenError{{"Service", "db", "x"}, {"ConfigMap", "db", "y"}, {"Service", "db", "x"}} {
		if err := taken.Keep(fmt.Errorf("wrapped: %w", &n)); err != nil {
			t.Fatalf("Keep(%v) = %v, want nil", n, err)
		}
	}
	if !taken.Has("Service", "db") || taken.Has("Secret", "db") {
		t.Errorf("Has is wrong: %v", taken.Names())
	}
	names := taken.Names()
	if len(names) != 2 || names[0].Kind != "ConfigMap" || names[1].Kind != "Service" {
		t.Errorf("Names = %v, want ConfigMap db then Service db, once each", names)
	}
	msg := Message("Cluster", "db", names, 1)
	for _, want := range []string{"2 object(s)", "ConfigMap db (y)", "and 1 more", OwnerAnnotation + "=Cluster/db"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Message %q lacks %q", msg, want)
		}
	}
}
