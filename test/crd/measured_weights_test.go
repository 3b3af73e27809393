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

var _ = Describe("Measured weights", func() {
	var seq int
	create := func(spec string) (*unstructured.Unstructured, error) {
		seq++
		obj := object("Cluster", fmt.Sprintf("measured-%d", seq), spec)
		return obj, k8sClient.Create(ctx, obj)
	}

	It("accept a Cluster weighing by Measured, with or without its settings", func() {
		_, err := create("image: gnmic\ntargetDistribution: {weighBy: Measured}")
		Expect(err).NotTo(HaveOccurred())
		c, err := create("image: gnmic\ntargetDistribution:\n  weighBy: Measured\n  measuredWeights: {window: 2m, hysteresis: 30m, maxWeight: 16}")
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		settings, _, err := unstructured.NestedMap(c.Object, "spec", "targetDistribution", "measuredWeights")
		Expect(err).NotTo(HaveOccurred())
		Expect(settings).To(Equal(map[string]any{"window": "2m", "hysteresis": "30m", "maxWeight": int64(16)}))
	})

	It("accept the measured fleet sample", func() {
		raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "weights", "measured.yaml"))
		Expect(err).NotTo(HaveOccurred())
		kinds := map[string]bool{}
		for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(doc, &u.Object)).To(Succeed())
			u.SetNamespace(namespace)
			u.SetName("measured-sample-" + u.GetName())
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "the sample's %s was rejected", u.GetKind())
			kinds[u.GetKind()] = true
		}
		Expect(kinds).To(Equal(map[string]bool{"Cluster": true, "Target": true}))
	})

	DescribeTable("reject settings that measure nothing, with a message that names them",
		func(spec, want string) {
			_, err := create(spec)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("0", "image: gnmic\ntargetDistribution: {weighBy: Measured, measuredWeights: {maxWeight: 0}}",
			"spec.targetDistribution.measuredWeights.maxWeight in body should be greater than or equal to 1"),
		Entry("above 1000", "image: gnmic\ntargetDistribution: {weighBy: Measured, measuredWeights: {maxWeight: 1001}}",
			"spec.targetDistribution.measuredWeights.maxWeight in body should be less than or equal to 1000"),
		Entry("a window of 0", "image: gnmic\ntargetDistribution: {weighBy: Measured, measuredWeights: {window: 0s}}",
			"window must be a positive duration"),
		Entry("a negative hysteresis", "image: gnmic\ntargetDistribution: {weighBy: Measured, measuredWeights: {hysteresis: -1m}}",
			"hysteresis must be a positive duration"),
		Entry("a hysteresis of 0", "image: gnmic\ntargetDistribution: {weighBy: Measured, measuredWeights: {hysteresis: 0s}}",
			"hysteresis must be a positive duration"),
	)
})
