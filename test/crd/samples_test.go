package crd_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

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
})
