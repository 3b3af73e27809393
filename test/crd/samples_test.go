package crd_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

var _ = Describe("Samples", func() {
	It("are all accepted by the apiserver, one of every kind", func() {
		files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "operator_v1alpha1_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		kinds := map[string]bool{}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(raw, &u.Object)).To(Succeed(), f)
			u.SetNamespace(namespace)
			u.SetName("sample-" + u.GetName())
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "sample %s was rejected", filepath.Base(f))
			kinds[u.GetKind()] = true
		}
		Expect(kinds).To(HaveLen(len(testenv.CRDResources())))
	})

	It("include one Output of every gNMIc output type, each accepted by the apiserver", func() {
		files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "outputs", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		types := map[string]string{}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(raw, &u.Object)).To(Succeed(), f)
			Expect(u.GetKind()).To(Equal("Output"), f)
			typ, _, _ := unstructured.NestedString(u.Object, "spec", "type")
			Expect(filepath.Base(f)).To(Equal(typ+".yaml"), "a sample is named after its output type")
			Expect(gnmic.OutputTypes).To(HaveKey(typ), f)
			u.SetNamespace(namespace)
			u.SetName("sample-output-" + u.GetName())
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "sample %s was rejected", filepath.Base(f))
			types[typ] = f
		}
		Expect(types).To(HaveLen(len(gnmic.OutputTypes)), "config/samples/outputs has %v", types)
	})
})
