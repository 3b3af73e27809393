package owned

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSettledHoldsOnlyTheSameVersionComparedWithTheSameWant(t *testing.T) {
	object := func(uid types.UID, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: uid, ResourceVersion: rv}}
	}
	var s Settled
	if s.holds("ConfigMap", object("u1", "5"), "h1") {
		t.Fatal("an object never compared holds")
	}
	s.note("ConfigMap", object("u1", "5"), "h1")
	for _, tc := range []struct {
		name string
		kind string
		have *corev1.ConfigMap
		hash string
		want bool
	}{
		{"the same version, the same want", "ConfigMap", object("u1", "5"), "h1", true},
		{"written since (by hand or by another tool)", "ConfigMap", object("u1", "6"), "h1", false},
		{"made again under the same name", "ConfigMap", object("u2", "5"), "h1", false},
		{"the operator wants something else", "ConfigMap", object("u1", "5"), "h2", false},
		{"another kind of the same name", "Service", object("u1", "5"), "h1", false},
	} {
		if got := s.holds(tc.kind, tc.have, tc.hash); got != tc.want {
			t.Errorf("%s: holds = %v, want %v", tc.name, got, tc.want)
		}
	}
	s.forget("ConfigMap", object("u1", "5"))
	if s.holds("ConfigMap", object("u1", "5"), "h1") {
		t.Error("holds after forget")
	}
	var none *Settled // a Writer without one compares every time
	none.note("ConfigMap", object("u1", "5"), "h1")
	if none.holds("ConfigMap", object("u1", "5"), "h1") {
		t.Error("a nil Settled holds")
	}
}
