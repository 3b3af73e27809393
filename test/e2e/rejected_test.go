//go:build e2e

package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// A configuration error every pod shares (a bad Output) must not make the pods unready: the PDB would then
// block every node drain and rollouts would stall, while the collectors still serve what they hold.
var _ = Describe("A configuration every collector refuses", Ordered, func() {
	fleet := harness.Fleet{Namespace: "rejected", Cluster: "telemetry", Replicas: 2}
	const targets = 40
	const rejection = `validate error: output "prometheus": listen address "::9804" is not valid`

	It("places 40 targets on 2 pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
	})

	It("leaves every pod Ready and names the error on the Cluster, then takes the fixed Output", func() {
		before := holdingsOf(fleet.Namespace).placement()
		collectors.RejectConfig(fleet.Namespace, rejection)
		setOutputListen(fleet, "::9804")

		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(getCluster(g, fleet).Status.Conditions, operatorv1alpha1.ConditionConfigApplied)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonPodConfigRejected))
			g.Expect(cond.Message).To(ContainSubstring(rejection))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			pods := collectorPods(g, fleet)
			g.Expect(pods).To(HaveLen(int(fleet.Replicas)))
			for _, p := range pods {
				g.Expect(podReady(&p)).To(BeTrue(), "pod %s turned unready over a configuration every pod refuses", p.Name)
			}
			g.Expect(holdingsOf(fleet.Namespace).placement()).To(Equal(before), "the collectors stopped serving what they held")
		}).WithTimeout(10 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		// The Output at fault says so, in the collectors' words, naming the Cluster.
		Eventually(func(g Gomega) {
			cond := outputAccepted(g, fleet)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonRejectedByCollectors))
			g.Expect(cond.Message).To(ContainSubstring(rejection))
			g.Expect(cond.Message).To(ContainSubstring("Cluster " + fleet.Cluster))
		}).WithTimeout(30 * time.Second).Should(Succeed())

		collectors.StopRejecting(fleet.Namespace)
		setOutputListen(fleet, ":9804")
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(getCluster(g, fleet).Status.Conditions, operatorv1alpha1.ConditionConfigApplied)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(outputAccepted(g, fleet).Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		expectPlaced(fleet, targets)
	})
})

// setOutputListen changes the fleet's Output, so that every pod gets a new configuration.
func setOutputListen(f harness.Fleet, listen string) {
	var o operatorv1alpha1.Output
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: f.Namespace, Name: "prometheus"}, &o)).To(Succeed())
	patch := client.MergeFrom(o.DeepCopy())
	o.Spec.Config = map[string]apiextensionsv1.JSON{"listen": {Raw: []byte(`"` + listen + `"`)}}
	Expect(k8sClient.Patch(ctx, &o, patch)).To(Succeed())
}

// outputAccepted is the Accepted condition of the fleet's Output.
func outputAccepted(g Gomega, f harness.Fleet) *metav1.Condition {
	var o operatorv1alpha1.Output
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: f.Namespace, Name: "prometheus"}, &o)).To(Succeed())
	cond := meta.FindStatusCondition(o.Status.Conditions, operatorv1alpha1.ConditionAccepted)
	g.Expect(cond).NotTo(BeNil())
	return cond
}
