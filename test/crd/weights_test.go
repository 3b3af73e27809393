package crd_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

var _ = Describe("Weights", func() {
	var seq int
	create := func(kind, spec string) (*unstructured.Unstructured, error) {
		seq++
		obj := object(kind, fmt.Sprintf("weights-%d", seq), spec)
		return obj, k8sClient.Create(ctx, obj)
	}

	It("default a Target to weight 1 and a Cluster to weighing by Count", func() {
		target, err := create("Target", "address: 10.0.0.1:57400\nprofile: p")
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(target), target)).To(Succeed())
		weight, found, err := unstructured.NestedInt64(target.Object, "spec", "weight")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue(), "spec.weight defaulted")
		Expect(weight).To(BeEquivalentTo(1))

		cluster, err := create("Cluster", "image: gnmic")
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		weighBy, _, err := unstructured.NestedString(cluster.Object, "spec", "targetDistribution", "weighBy")
		Expect(err).NotTo(HaveOccurred())
		Expect(weighBy).To(Equal("Count"))
	})

	DescribeTable("reject what is not a weight, with a message that names it",
		func(kind, spec, want string) {
			_, err := create(kind, spec)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("a Target of weight 0", "Target", "address: 10.0.0.1:57400\nprofile: p\nweight: 0",
			"spec.weight in body should be greater than or equal to 1"),
		Entry("a Target heavier than 1000", "Target", "address: 10.0.0.1:57400\nprofile: p\nweight: 1001",
			"spec.weight in body should be less than or equal to 1000"),
		Entry("a Cluster weighing by something unknown", "Cluster", "image: gnmic\ntargetDistribution: {weighBy: Random}",
			`spec.targetDistribution.weighBy: Unsupported value: "Random"`),
	)

	It("accept the weighted fleet sample", func() {
		raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "weights", "fleet.yaml"))
		Expect(err).NotTo(HaveOccurred())
		kinds := map[string]bool{}
		for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(doc, &u.Object)).To(Succeed())
			u.SetNamespace(namespace)
			u.SetName("weights-sample-" + u.GetName())
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "the sample's %s was rejected", u.GetKind())
			kinds[u.GetKind()] = true
		}
		Expect(kinds).To(HaveKey("Cluster"))
		Expect(kinds).To(HaveKey("Target"))
		Expect(kinds).To(HaveKey("HorizontalPodAutoscaler"))
	})
})
