//go:build e2e

package e2e_test

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// The real collector answers 200 to a configuration whose output it cannot start (here a listen address it
// cannot listen on), keeps its targets running and sends nothing to that output: only its output state
// stream says so. The pods must stay Ready (the PDB would otherwise block every node drain and rollouts would
// stall, while the collectors still serve their targets), and the operator must say which Output failed, on
// which pods, and why.
var _ = Describe("An Output every collector fails to start", Ordered, func() {
	fleet := harness.Fleet{Namespace: "rejected", Cluster: "telemetry", Replicas: 2}
	const targets = 40
	const failure = "listen tcp: address ::9804: too many colons in address"

	It("places 40 targets on 2 pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
	})

	It("leaves every pod Ready and collecting, names the Output, the pods and the reason, counts them, then clears once it starts", func() {
		before := holdingsOf(fleet.Namespace).placement()
		setOutputListen(fleet, "::9804")

		pods := []string{fleet.Cluster + "-0", fleet.Cluster + "-1"}
		Eventually(func(g Gomega) {
			c := getCluster(g, fleet)
			cond := meta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionOutputsRunning)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonOutputsFailed))
			g.Expect(cond.Message).To(ContainSubstring("Output prometheus failed to start on pod(s) " + strings.Join(pods, ", ")))
			g.Expect(cond.Message).To(ContainSubstring(failure))
			// The collectors took the configuration: it is applied, and accepted.
			g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, operatorv1alpha1.ConditionConfigApplied)).To(BeTrue())
			o := fleetOutput(g, fleet)
			g.Expect(o.Status.FailedOn).To(Equal([]operatorv1alpha1.ComponentFailure{{Cluster: fleet.Cluster, Pods: pods,
				PodCount: 2, Reason: failure}}))
			running := meta.FindStatusCondition(o.Status.Conditions, operatorv1alpha1.ConditionRunning)
			g.Expect(running).NotTo(BeNil())
			g.Expect(running.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(meta.IsStatusConditionTrue(o.Status.Conditions, operatorv1alpha1.ConditionAccepted)).To(BeTrue())
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			ready := collectorPods(g, fleet)
			g.Expect(ready).To(HaveLen(int(fleet.Replicas)))
			for _, p := range ready {
				g.Expect(podReady(&p)).To(BeTrue(), "pod %s turned unready over an output it could not start", p.Name)
			}
			g.Expect(holdingsOf(fleet.Namespace).placement()).To(Equal(before), "the collectors stopped serving what they held")
		}).WithTimeout(10 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(warningEvents(g, fleet.Namespace, "Cluster", fleet.Cluster, operatorv1alpha1.EventOutputFailed)).
				To(ContainElement(ContainSubstring(failure)))
			g.Expect(warningEvents(g, fleet.Namespace, "Output", "prometheus", operatorv1alpha1.EventOutputFailed)).
				To(ContainElement(ContainSubstring("Cluster " + fleet.Cluster)))
			g.Expect(failedOutputsMetric(g, fleet)).To(Equal(map[string]float64{pods[0]: 1, pods[1]: 1}))
		}).WithTimeout(30 * time.Second).Should(Succeed())

		setOutputListen(fleet, ":9804")
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(getCluster(g, fleet).Status.Conditions, operatorv1alpha1.ConditionOutputsRunning)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
			o := fleetOutput(g, fleet)
			g.Expect(o.Status.FailedOn).To(BeEmpty())
			g.Expect(meta.IsStatusConditionTrue(o.Status.Conditions, operatorv1alpha1.ConditionRunning)).To(BeTrue())
			g.Expect(failedOutputsMetric(g, fleet)).To(Equal(map[string]float64{pods[0]: 0, pods[1]: 0}))
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

// fleetOutput is the fleet's Output.
func fleetOutput(g Gomega, f harness.Fleet) *operatorv1alpha1.Output {
	var o operatorv1alpha1.Output
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: f.Namespace, Name: "prometheus"}, &o)).To(Succeed())
	return &o
}

// warningEvents are the messages of the Warning events with the reason recorded on one object.
func warningEvents(g Gomega, namespace, kind, name, reason string) []string {
	var list corev1.EventList
	g.Expect(k8sClient.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Type == corev1.EventTypeWarning && e.Reason == reason && e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e.Message)
		}
	}
	return out
}

// failedOutputsMetric is gnmic_cluster_failed_outputs of the fleet's pods, as the operator replica that
// reconciles the Cluster (the leader) exports it.
func failedOutputsMetric(g Gomega, f harness.Fleet) map[string]float64 {
	lease, err := cp.OperatorLeader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	text, err := cp.OperatorMetrics(ctx, lease.Pod)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	prefix := fmt.Sprintf(`gnmic_cluster_failed_outputs{cluster=%q,namespace=%q,pod="`, f.Cluster, f.Namespace)
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		pod, value, _ := strings.Cut(rest, `"} `)
		v, err := strconv.ParseFloat(value, 64)
		g.Expect(err).NotTo(HaveOccurred(), "line %q", line)
		out[pod] = v
	}
	return out
}
