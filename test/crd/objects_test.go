package crd_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	. "github.com/onsi/gomega"
)

const namespace = "crd-test"

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// object builds an operator.gnmic.dev/v1alpha1 object of kind from the YAML of its spec, so that the tests
// send exactly what a user would write, including what the Go types could not express (wrong types).
func object(kind, name, specYAML string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if specYAML != "" {
		spec := map[string]any{}
		ExpectWithOffset(1, yaml.Unmarshal([]byte(specYAML), &spec)).To(Succeed())
		u.Object["spec"] = spec
	}
	u.SetAPIVersion("operator.gnmic.dev/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}
