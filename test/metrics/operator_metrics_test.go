package metrics_test

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	. "github.com/onsi/gomega"
)

// conflictGauge reads gnmic_operator_metrics_api_conflict{apiservice=name} from the operator's registry;
// -1 when it is not exported.
func conflictGauge(name string) float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, family := range families {
		if family.GetName() != "gnmic_operator_metrics_api_conflict" {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "apiservice" && label.GetValue() == name {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

func unstructuredString(u *unstructured.Unstructured, fields ...string) (string, bool, error) {
	return unstructured.NestedString(u.Object, fields...)
}
