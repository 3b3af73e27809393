//go:build e2e

package e2e_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
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
	// TargetsMoved are the targets that changed pods (those of the pods scaled away).
	TargetsMoved int `json:"targetsMoved"`
	collectionFigures
	busyFigures
	// RemovalsBehindBlackhole counts the deleted targets whose removal a collector acknowledged while a
	// blackholed start held it; MinRemovalWaitBehindBlackhole is the shortest time from such an
	// acknowledgement to the collector running the target no more, MaxRemovalWait the longest of any removal.
	RemovalsBehindBlackhole       int     `json:"removalsAcknowledgedWhileABlackholedStartHeldTheCollector"`
	MinRemovalWaitBehindBlackhole float64 `json:"minSecondsSuchARemovalWaited"`
	MaxRemovalWait                float64 `json:"maxSecondsFromRemovalAcknowledgedToTargetGone"`
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

	It("scales down after stabilization with busy collectors, never back up, never a target on two collectors, and keeps every target placed", func() {
		tracker := trackReplicas(fleet)
		collection := trackCollection(fleet.Namespace, holdingsOf(fleet.Namespace).placement())
		DeferCleanup(collectors.ClearBlackholes, fleet.Namespace)
		const stepEvery = 20 * time.Second
		var peakUnassigned int32
		watchUnassigned := func(g Gomega) harness.Snapshot {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			peakUnassigned = max(peakUnassigned, s.Unassigned)
			return s
		}
		var busy busyFigures
		var behind int
		var minBehind, maxWait time.Duration
		firstStep := time.Now()
		for i := 1; i < len(steps); i++ {
			stepStart := time.Now()
			By(fmt.Sprintf("making every pod busy: one of its remaining targets restarts into a blackholed device, then %d targets are deleted", steps[i-1]-steps[i]))
			placement := holdingsOf(fleet.Namespace).placement()
			picks := pickPerPod(placement, func(t string) bool { return t < harness.TargetName(steps[len(steps)-1]) })
			holes := blackholeEach(fleet.Namespace, picks, busyHold)
			for _, target := range picks {
				reconnect(fleet.Namespace, target)
			}
			started := awaitBlackholes(holes, 10*time.Second)
			busy.add(holes)
			held := map[string]*fakecollector.Collector{}
			for pod := range picks {
				held[pod], _ = collectors.Collector(fleet.Namespace, pod)
			}
			var deleted []string
			for n := steps[i]; n < steps[i-1]; n++ {
				deleted = append(deleted, harness.TargetName(n))
			}
			collection.Forget(deleted...)
			vanished := watchVanishing(fleet.Namespace, deleted)
			Expect(fleet.DeleteTargets(ctx, k8sClient, steps[i], steps[i-1])).To(Succeed())
			Consistently(func(g Gomega) { watchUnassigned(g) }).WithTimeout(stepEvery - time.Since(stepStart)).WithPolling(500 * time.Millisecond).Should(Succeed())

			gone := vanished()
			for _, target := range deleted {
				pod := placement[target]
				c, ok := collectors.Collector(fleet.Namespace, pod)
				if !ok || c != held[pod] {
					continue // its pod was scaled away: the collector went with it
				}
				acked, ok := removalAcknowledged(c, target, stepStart)
				Expect(ok).To(BeTrue(), "%s: the removal of deleted target %s was never sent", pod, target)
				Expect(gone).To(HaveKey(target), "deleted target %s still runs on %s", target, pod)
				wait := gone[target].Sub(acked)
				maxWait = max(maxWait, wait)
				s, busyPod := started[pod]
				if !busyPod || s.pod != pod || acked.Before(s.at) || !acked.Before(s.at.Add(busyHold)) {
					continue
				}
				// The blackholed start is seen within 10 ms of when it began; a removal queued behind it is
				// acted on only once it gave up, Hold after it began.
				Expect(gone[target]).To(BeTemporally(">=", s.at.Add(busyHold-50*time.Millisecond)),
					"%s: the removal of %s did not wait behind the blackholed start of %s", pod, target, picks[pod])
				behind++
				if minBehind == 0 || wait < minBehind {
					minBehind = wait
				}
			}
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
		Eventually(func(g Gomega) {
			c := collectionOf(fleet.Namespace)
			g.Expect(c.held.placement()).To(HaveLen(steps[len(steps)-1]))
			g.Expect(c.collecting).To(HaveLen(steps[len(steps)-1]), "every target collected, the blackholed ones restarted")
		}).WithTimeout(time.Minute).Should(Succeed())

		By("holding at the minimal fleet past another stabilization window")
		Consistently(func(g Gomega) {
			s := watchUnassigned(g)
			g.Expect(s.Replicas).To(Equal(minimal))
		}).WithTimeout(window * time.Second).WithPolling(time.Second).Should(Succeed())

		_, history := tracker.Stop()
		figures := collection.Stop()
		writeResult("decommission", decommissionResult{
			Scenario: "decommission", PodCapacity: fleet.PodCapacity, TargetSteps: steps, StepSeconds: int(stepEvery.Seconds()),
			ScaleDownStabilizationSec: window, ReplicasBefore: 5, MinimalReplicas: minimal, FinalReplicas: minimal,
			SecondsFromFirstStep: fromFirst.Round(100 * time.Millisecond).Seconds(),
			SecondsToFinal:       toFinal.Round(100 * time.Millisecond).Seconds(), PeakUnassigned: peakUnassigned, ReplicaHistory: history,
			TargetsMoved: figures.Strays, collectionFigures: figures, busyFigures: busy,
			RemovalsBehindBlackhole:       behind,
			MinRemovalWaitBehindBlackhole: minBehind.Round(10 * time.Millisecond).Seconds(),
			MaxRemovalWait:                maxWait.Round(10 * time.Millisecond).Seconds(),
		})
		Expect(figures.MaxDuplicated).To(BeZero(), "a target was on two collectors")
		Expect(behind).To(BeNumerically(">", 0), "no removal was acknowledged while a blackholed start held its collector")
		for i := 1; i < len(history); i++ {
			Expect(history[i]).To(BeNumerically("<", history[i-1]), "replicas went back up: %v", history)
		}
		Expect(peakUnassigned).To(BeZero(), "targets were unassigned while the fleet shrank")
	})
})
