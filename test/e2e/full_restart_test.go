//go:build e2e

package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// fullRestartResult is what test/e2e/results/full-restart.json holds.
type fullRestartResult struct {
	Scenario     string `json:"scenario"`
	Targets      int    `json:"targets"`
	GraceSeconds int    `json:"graceSeconds"`
	// ScaleUp: replicas 0, then 3 again. Deleted: every pod deleted at once and kept away past the grace
	// period. Seconds from the pods' return until every target is back on its old pod; moved counts the
	// targets that ended on another pod (the promise is 0).
	ScaleUpSecondsToPlacedAsBefore float64 `json:"scaleUpSecondsToPlacedAsBefore"`
	ScaleUpMoved                   int     `json:"scaleUpTargetsOnAnotherPod"`
	DeletedSecondsToPlacedAsBefore float64 `json:"deletedSecondsToPlacedAsBefore"`
	DeletedMoved                   int     `json:"deletedTargetsOnAnotherPod"`
}

// Seed 001, "Full cluster restart": when every collector pod is gone and the same ordinals come back, the
// targets end where they were. The Cluster's pods run on a node of their own, so that this scenario can keep
// them from being scheduled without touching the suite's other fleets.
var _ = Describe("Full restart of a Cluster's collector pods", Ordered, func() {
	const (
		ns      = "full-restart"
		node    = "full-restart-0"
		taint   = "gnmic-e2e/full-restart"
		targets = 300
		grace   = 5 * time.Second
	)
	fleet := harness.Fleet{Namespace: ns, Cluster: "telemetry", Replicas: 3, Tune: func(spec *operatorv1alpha1.ClusterSpec) {
		spec.TargetDistribution.UnreadyGracePeriod = &metav1.Duration{Duration: grace}
		spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
		spec.Tolerations = []corev1.Toleration{{Key: taint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}}
	result := fullRestartResult{Scenario: "full-restart", Targets: targets, GraceSeconds: int(grace.Seconds())}
	var before map[string]string

	BeforeAll(func() {
		Expect(cp.AddNodes(ctx, harness.NodeSpec{Name: node, Pods: 10})).To(Succeed())
		patchPoolNode(node, `{"spec":{"taints":[{"key":"`+taint+`","value":"true","effect":"NoSchedule"}]}}`)
	})
	AfterAll(func() { writeResult("full-restart", result) })

	It("places 300 targets on 3 pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
		before = holdingsOf(ns).placement()
		Expect(before).To(HaveLen(targets))
	})

	It("scaled to 0 and back to 3, ends with every target on its old pod", func() {
		scale(fleet, 0)
		Eventually(func(g Gomega) { g.Expect(collectorPods(g, fleet)).To(BeEmpty()) }).
			WithTimeout(time.Minute).Should(Succeed())
		expectUnassignedRemembering(fleet, before)

		start := time.Now()
		scale(fleet, 3)
		expectPlacedAsBefore(fleet, before, &result.ScaleUpMoved)
		result.ScaleUpSecondsToPlacedAsBefore = time.Since(start).Seconds()
	})

	It("with every pod deleted at once and kept away past the grace period, ends with every target on its old pod", func() {
		patchPoolNode(node, `{"spec":{"unschedulable":true}}`)
		for _, p := range collectorPods(Default, fleet) {
			Expect(cp.Clientset.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})).To(Succeed())
		}
		expectUnassignedRemembering(fleet, before)

		start := time.Now()
		patchPoolNode(node, `{"spec":{"unschedulable":false}}`)
		expectPlacedAsBefore(fleet, before, &result.DeletedMoved)
		result.DeletedSecondsToPlacedAsBefore = time.Since(start).Seconds()
	})
})

// expectUnassignedRemembering waits until every target of the fleet is unassigned, its status naming the
// pod it was on as its lastPod.
func expectUnassignedRemembering(f harness.Fleet, before map[string]string) {
	Eventually(func(g Gomega) {
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(f.Namespace))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(len(before)))
		for _, t := range list.Items {
			st := t.Status.ClusterStates[f.Cluster]
			g.Expect(st.State).To(Equal(operatorv1alpha1.TargetUnassigned), "target %s", t.Name)
			g.Expect(st.LastPod).To(Equal(before[t.Name]), "target %s", t.Name)
		}
	}).WithTimeout(time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
}

// expectPlacedAsBefore waits until every pod is back and Ready and every target is collected by its pod of
// before, its status saying so with no lastPod. moved counts, at the last look, the targets a collector
// holds on another pod than before.
func expectPlacedAsBefore(f harness.Fleet, before map[string]string, moved *int) {
	EventuallyWithOffset(1, func(g Gomega) {
		expectPlacedG(g, f, len(before))
		now := holdingsOf(f.Namespace).placement()
		*moved = 0
		for target, pod := range before {
			if now[target] != pod {
				*moved++
			}
		}
		g.Expect(*moved).To(BeZero(), "targets on another pod than before the restart")
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(f.Namespace))).To(Succeed())
		for _, t := range list.Items {
			st := t.Status.ClusterStates[f.Cluster]
			g.Expect(st.Pod).To(Equal(before[t.Name]), "target %s", t.Name)
			g.Expect(st.LastPod).To(BeEmpty(), "target %s", t.Name)
		}
	}).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
}
