//go:build e2e

package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// burstResult is what test/e2e/results/burst.json holds.
type burstResult struct {
	Scenario               string  `json:"scenario"`
	PodCapacity            int32   `json:"podCapacity"`
	TargetsBefore          int     `json:"targetsBefore"`
	TargetsAdded           int     `json:"targetsAdded"`
	ReplicasBefore         int32   `json:"replicasBefore"`
	PeakUnassigned         int32   `json:"peakUnassigned"`
	SecondsToZeroUnassign  float64 `json:"secondsToZeroUnassigned"`
	SecondsToAllCollecting float64 `json:"secondsToAllCollecting"`
	PeakReplicas           int32   `json:"peakReplicas"`
	MinimalReplicas        int32   `json:"minimalReplicas"`
	FinalReplicas          int32   `json:"finalReplicas"`
	ReplicaHistory         []int32 `json:"replicaHistory"`
}

var _ = Describe("Burst: targets beyond the fleet's capacity", Ordered, func() {
	fleet := harness.Fleet{Namespace: "burst", Cluster: "telemetry", Replicas: 3, PodCapacity: 100}
	const before, added = 280, 150

	It("places 280 targets on 3 pods of capacity 100", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, before)).To(Succeed())
		Eventually(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.ReadyReplicas).To(Equal(int32(3)))
			g.Expect(s.Targets).To(Equal(int32(before)))
			g.Expect(s.Unassigned).To(BeZero())
			g.Expect(collectedTargets(fleet.Namespace)).To(Equal(before))
		}).WithTimeout(2 * time.Minute).Should(Succeed())
	})

	It("is held at 3 replicas by an autoscaler that reads the operator's metrics", func() {
		_, err := cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(fleet.Namespace).
			Create(ctx, demandPlusOverflow(fleet, 1, 10, 30), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, fleet.Cluster)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.HPAReason).To(ContainSubstring("ValidMetricFound"))
			g.Expect(s.HPADesired).To(Equal(int32(3)))
		}).WithTimeout(time.Minute).Should(Succeed())
	})

	It("adds pods until no target is unassigned, without overshooting", func() {
		minimal := minimalReplicas(before+added, int(fleet.PodCapacity))
		tracker := trackReplicas(fleet)
		start := time.Now()
		Expect(fleet.AddTargets(ctx, k8sClient, before, before+added)).To(Succeed())

		var peakUnassigned int32
		Eventually(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			peakUnassigned = max(peakUnassigned, s.Unassigned)
			g.Expect(s.Targets).To(Equal(int32(before + added)))
			g.Expect(s.Unassigned).To(BeZero())
			g.Expect(peakUnassigned).To(BeNumerically(">", 0), "the burst must overflow the fleet first")
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		toZero := time.Since(start)

		Eventually(func() int { return collectedTargets(fleet.Namespace) }).WithTimeout(time.Minute).Should(Equal(before + added))
		toCollecting := time.Since(start)

		By("holding steady for 30 s after the burst")
		Consistently(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Unassigned).To(BeZero())
			g.Expect(s.Replicas).To(BeNumerically("<=", minimal+1))
		}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())

		final, err := fleet.Observe(ctx, cp, k8sClient, "")
		Expect(err).NotTo(HaveOccurred())
		peak, history := tracker.Stop()
		writeResult("burst", burstResult{
			Scenario: "burst", PodCapacity: fleet.PodCapacity, TargetsBefore: before, TargetsAdded: added,
			ReplicasBefore: 3, PeakUnassigned: peakUnassigned,
			SecondsToZeroUnassign:  toZero.Round(100 * time.Millisecond).Seconds(),
			SecondsToAllCollecting: toCollecting.Round(100 * time.Millisecond).Seconds(),
			PeakReplicas:           peak, MinimalReplicas: minimal, FinalReplicas: final.Replicas, ReplicaHistory: history,
		})
		Expect(peak).To(BeNumerically("<=", minimal+1), "replica history %v", history)
		Expect(final.Replicas).To(Equal(minimal))
	})
})

// collectedTargets counts the distinct targets the namespace's fake collectors hold.
func collectedTargets(namespace string) int { return len(holdingsOf(namespace)) }
