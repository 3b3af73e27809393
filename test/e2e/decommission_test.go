//go:build e2e

package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// decommissionResult is what test/e2e/results/decommission.json holds.
type decommissionResult struct {
	Scenario                  string  `json:"scenario"`
	PodCapacity               int32   `json:"podCapacity"`
	TargetSteps               []int   `json:"targetSteps"`
	StepSeconds               int     `json:"stepSeconds"`
	ScaleDownStabilizationSec int32   `json:"scaleDownStabilizationSeconds"`
	ReplicasBefore            int32   `json:"replicasBefore"`
	MinimalReplicas           int32   `json:"minimalReplicasAfter"`
	FinalReplicas             int32   `json:"finalReplicas"`
	SecondsFromFirstStep      float64 `json:"secondsFromFirstStepToFinalReplicas"`
	SecondsToFinal            float64 `json:"secondsFromLastStepToFinalReplicas"`
	PeakUnassigned            int32   `json:"peakUnassignedDuringScaleDown"`
	ReplicaHistory            []int32 `json:"replicaHistory"`
}

var _ = Describe("Decommission: targets removed in steps", Ordered, func() {
	fleet := harness.Fleet{Namespace: "decommission", Cluster: "telemetry", Replicas: 5, PodCapacity: 100}
	const window = 30
	steps := []int{430, 330, 230, 130}

	It("starts from 430 targets on 5 pods held by the autoscaler", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, steps[0])).To(Succeed())
		_, err := cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(fleet.Namespace).
			Create(ctx, demandPlusOverflow(fleet, 1, 10, window), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, fleet.Cluster)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.ReadyReplicas).To(Equal(int32(5)))
			g.Expect(s.Unassigned).To(BeZero())
			g.Expect(s.Targets).To(Equal(int32(steps[0])))
			g.Expect(s.HPAReason).To(ContainSubstring("ValidMetricFound"))
			g.Expect(s.HPADesired).To(Equal(int32(5)))
		}).WithTimeout(2 * time.Minute).Should(Succeed())
	})

	It("scales down after stabilization, never back up, and keeps every target placed", func() {
		tracker := trackReplicas(fleet)
		const stepEvery = 20 * time.Second
		var peakUnassigned int32
		watchUnassigned := func(g Gomega) harness.Snapshot {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			peakUnassigned = max(peakUnassigned, s.Unassigned)
			return s
		}
		firstStep := time.Now()
		for i := 1; i < len(steps); i++ {
			Expect(fleet.DeleteTargets(ctx, k8sClient, steps[i], steps[i-1])).To(Succeed())
			Consistently(func(g Gomega) { watchUnassigned(g) }).WithTimeout(stepEvery).WithPolling(500 * time.Millisecond).Should(Succeed())
		}
		lastStep := time.Now()
		minimal := minimalReplicas(steps[len(steps)-1], int(fleet.PodCapacity))
		Eventually(func(g Gomega) {
			s := watchUnassigned(g)
			g.Expect(s.Replicas).To(Equal(minimal))
			g.Expect(s.ReadyReplicas).To(Equal(minimal))
			g.Expect(s.Targets).To(Equal(int32(steps[len(steps)-1])))
		}).WithTimeout(3 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		toFinal, fromFirst := time.Since(lastStep), time.Since(firstStep)
		Eventually(func() int { return collectedTargets(fleet.Namespace) }).WithTimeout(time.Minute).Should(Equal(steps[len(steps)-1]))

		By("holding at the minimal fleet past another stabilization window")
		Consistently(func(g Gomega) {
			s := watchUnassigned(g)
			g.Expect(s.Replicas).To(Equal(minimal))
		}).WithTimeout(window * time.Second).WithPolling(time.Second).Should(Succeed())

		_, history := tracker.Stop()
		writeResult("decommission", decommissionResult{
			Scenario: "decommission", PodCapacity: fleet.PodCapacity, TargetSteps: steps, StepSeconds: int(stepEvery.Seconds()),
			ScaleDownStabilizationSec: window, ReplicasBefore: 5, MinimalReplicas: minimal, FinalReplicas: minimal,
			SecondsFromFirstStep: fromFirst.Round(100 * time.Millisecond).Seconds(),
			SecondsToFinal:       toFinal.Round(100 * time.Millisecond).Seconds(), PeakUnassigned: peakUnassigned, ReplicaHistory: history,
		})
		for i := 1; i < len(history); i++ {
			Expect(history[i]).To(BeNumerically("<", history[i-1]), "replicas went back up: %v", history)
		}
		Expect(peakUnassigned).To(BeZero(), "targets were unassigned while the fleet shrank")
	})
})
