//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// Event processors as a telemetry team writes them: a Pipeline names two, in an order that is not their names'
// order, for the prometheus Output it selects; every collector pod applies them to that Output in that order,
// and the Output's Service routes Prometheus to every collector pod on the output's port.
var _ = Describe("A Pipeline with two event processors", Ordered, func() {
	fleet := harness.Fleet{Namespace: "processors", Cluster: "telemetry", Replicas: 2}
	const targets = 20
	chain := []string{"tag-site", "drop-empty"}

	It("places 20 targets on 2 pods, the Output applying the Pipeline's processors in the Pipeline's order", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		emulated, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		Expect(cp.EmulateEndpointSlices(emulated, fleet.Namespace,
			labels.SelectorFromSet(labels.Set{operatorv1alpha1.ClusterLabel: fleet.Cluster}))).To(Succeed())
		for _, p := range []*operatorv1alpha1.Processor{
			{ObjectMeta: metav1.ObjectMeta{Namespace: fleet.Namespace, Name: "tag-site"},
				Spec: operatorv1alpha1.ProcessorSpec{Type: "event-add-tag", Config: jsonConfig(map[string]any{"add": map[string]string{"site": "par1"}})}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: fleet.Namespace, Name: "drop-empty"},
				Spec: operatorv1alpha1.ProcessorSpec{Type: "event-drop", Config: jsonConfig(map[string]any{"condition": ".values == {}"})}},
		} {
			Expect(k8sClient.Create(ctx, p)).To(Succeed())
		}
		var p operatorv1alpha1.Pipeline
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: fleet.Namespace, Name: "leaves"}, &p)).To(Succeed())
		patch := client.MergeFrom(p.DeepCopy())
		p.Spec.Outputs.ProcessorRefs = chain
		Expect(k8sClient.Patch(ctx, &p, patch)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)

		Eventually(func(g Gomega) {
			pods := collectorPods(g, fleet)
			g.Expect(pods).To(HaveLen(int(fleet.Replicas)))
			for _, pod := range pods {
				col, ok := collectors.Collector(fleet.Namespace, pod.Name)
				g.Expect(ok).To(BeTrue(), "pod %s has no collector", pod.Name)
				last, ok := col.LastApplied()
				g.Expect(ok).To(BeTrue(), "pod %s was never configured", pod.Name)
				g.Expect(last.Config.EventProcessors("outputs", "prometheus")).To(Equal(chain), "pod %s", pod.Name)
				g.Expect(last.Config.Processors).To(HaveLen(2), "pod %s", pod.Name)
				g.Expect(last.Config.ProcessorType("tag-site")).To(Equal("event-add-tag"))
				g.Expect(last.Config.ProcessorType("drop-empty")).To(Equal("event-drop"))
				g.Expect(last.Config.InitError("outputs", "prometheus")).To(Succeed(), "pod %s", pod.Name)
				g.Expect(last.Config.Targets).NotTo(BeEmpty(), "pod %s", pod.Name)
			}
			g.Expect(getCluster(g, fleet).Status.ProcessorsCount).To(BeEquivalentTo(2))
			var p operatorv1alpha1.Pipeline
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: fleet.Namespace, Name: "leaves"}, &p)).To(Succeed())
			g.Expect(p.Status.ProcessorsCount).To(BeEquivalentTo(2))
			g.Expect(endpointsOf(g, fleet, fleet.Cluster+"-out-prometheus")).
				To(Equal(collectorEndpoints(g, fleet, "prom-prometheus", 9804)))
		}).WithTimeout(time.Minute).Should(Succeed())
	})
})

// jsonConfig is a spec.config holding values.
func jsonConfig(values map[string]any) map[string]apiextensionsv1.JSON {
	out := make(map[string]apiextensionsv1.JSON, len(values))
	for k, v := range values {
		raw, err := json.Marshal(v)
		Expect(err).NotTo(HaveOccurred())
		out[k] = apiextensionsv1.JSON{Raw: raw}
	}
	return out
}
