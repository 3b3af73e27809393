package main

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// TestTheManagersCacheKeepsNoManagedFields: the operator never reads managedFields, and on a Target they weigh
// about as much as the rest of it, so the manager's cache drops them, with and without --sharding, while it
// still keeps what the reconciler reads.
func TestTheManagersCacheKeepsNoManagedFields(t *testing.T) {
	for _, sharded := range []bool{false, true} {
		o := defaultOptions()
		o.sharding = sharded
		opts := managerOptions(o).Cache
		if opts.DefaultTransform == nil {
			t.Fatalf("sharding=%v: the manager's cache has no transform; it keeps managedFields", sharded)
		}
		if len(opts.ByObject) == 0 {
			t.Fatalf("sharding=%v: the manager's cache lost its per-kind limits", sharded)
		}
		target := &operatorv1alpha1.Target{
			ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "net", ResourceVersion: "7",
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}},
			Spec: operatorv1alpha1.TargetSpec{Address: "10.0.0.1:57400", Profile: "routers"},
		}
		out, err := opts.DefaultTransform(target)
		if err != nil {
			t.Fatalf("sharding=%v: transform: %v", sharded, err)
		}
		kept, ok := out.(*operatorv1alpha1.Target)
		if !ok {
			t.Fatalf("sharding=%v: transform gave a %T", sharded, out)
		}
		if kept.ManagedFields != nil {
			t.Errorf("sharding=%v: the cached Target keeps managedFields %v", sharded, kept.ManagedFields)
		}
		if kept.Spec.Address != "10.0.0.1:57400" || kept.ResourceVersion != "7" || kept.Name != "r1" {
			t.Errorf("sharding=%v: the transform changed what the reconciler reads: %+v", sharded, kept)
		}
	}
}
