package crd_test

import (
	"maps"
	"os"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// The Output and Input CRDs accept the types the operator knows gNMIc has (internal/gnmic OutputTypes and
// InputTypes, read from gNMIc's source) and no other: a type gNMIc registers but the CRD refuses is a
// feature users cannot reach, a type the CRD accepts but gNMIc lacks is a collector that refuses the push.
var _ = Describe("Output and Input types", func() {
	It("accepts an Output of every gNMIc output type and refuses one gNMIc has no collector pod for", func() {
		Expect(gnmic.OutputTypes).To(HaveKey("clickhouse"))
		Expect(gnmic.OutputTypes).To(HaveKey("snmp"))
		for _, typ := range slices.Sorted(maps.Keys(gnmic.OutputTypes)) {
			obj := object("Output", "type-"+strings.ReplaceAll(typ, "_", "-"), "type: "+typ+"\nconfig: {}")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "the Output CRD refuses gNMIc output type %s", typ)
		}
		err := k8sClient.Create(ctx, object("Output", "type-asciigraph", "type: asciigraph"))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring(`spec.type: Unsupported value: "asciigraph"`))
	})

	It("accepts an Input of every gNMIc input type", func() {
		for _, typ := range slices.Sorted(maps.Keys(gnmic.InputTypes)) {
			Expect(k8sClient.Create(ctx, object("Input", "type-"+typ, "type: "+typ+"\nconfig: {}"))).
				To(Succeed(), "the Input CRD refuses gNMIc input type %s", typ)
		}
	})

	It("offers exactly those types in the OLM console's select box", func() {
		data, err := os.ReadFile("../../config/manifests/bases/gnmic-operator.clusterserviceversion.yaml")
		Expect(err).NotTo(HaveOccurred())
		var csv struct {
			Spec struct {
				CustomResourceDefinitions struct {
					Owned []struct {
						Kind            string
						SpecDescriptors []struct {
							Path         string
							XDescriptors []string `json:"x-descriptors"`
						}
					}
				}
			}
		}
		Expect(yaml.Unmarshal(data, &csv)).To(Succeed())
		var offered []string
		for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
			for _, d := range crd.SpecDescriptors {
				if crd.Kind == "Output" && d.Path == "type" {
					for _, x := range d.XDescriptors {
						offered = append(offered, strings.TrimPrefix(x, "urn:alm:descriptor:com.tectonic.ui:select:"))
					}
				}
			}
		}
		slices.Sort(offered)
		Expect(offered).To(Equal(slices.Sorted(maps.Keys(gnmic.OutputTypes))))
	})
})
