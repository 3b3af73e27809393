//go:build e2e

package e2e_test

import (
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// podDeletionResult and nodeLossResult are what test/e2e/results/pod-deletion.json and node-loss.json hold.
type podDeletionResult struct {
	Scenario           string  `json:"scenario"`
	GraceSeconds       int     `json:"unreadyGracePeriodSeconds"`
	Targets            int     `json:"targets"`
	PodTargets         int     `json:"targetsOnTheDeletedPod"`
	SecondsToRecollect float64 `json:"secondsFromDeletionToEveryTargetCollected"`
	TargetsMoved       int     `json:"targetsMoved"`
	FinalOnOnePodEach  int     `json:"targetsOnExactlyOneCollector"`
	collectionFigures
}

type nodeLossResult struct {
	Scenario           string   `json:"scenario"`
	GraceSeconds       int      `json:"unreadyGracePeriodSeconds"`
	Targets            int      `json:"targets"`
	PodsLost           []string `json:"podsLost"`
	TargetsOnLostPods  int      `json:"targetsOnLostPods"`
	SecondsToFirstMove float64  `json:"secondsFromNodeDeletionToFirstMove"`
	SecondsToRecollect float64  `json:"secondsFromNodeDeletionToEveryTargetCollected"`
	// LostPodsLeftAtMove counts the lost pods whose objects still existed when every target was collected
	// again: the operator follows the Node, not the pod garbage collector.
	LostPodsLeftAtMove    int     `json:"lostPodObjectsLeftWhenEveryTargetWasCollected"`
	SecondsToPodsRemoved  float64 `json:"secondsFromNodeDeletionToPodsRemoved"`
	TargetsMoved          int     `json:"targetsMoved"`
	TargetsOnReturnedPods int     `json:"targetsOnReturnedPods"`
	// SecondsToPlacedAsBefore is from the new node's creation until every target is back on its original pod.
	SecondsToPlacedAsBefore float64 `json:"secondsFromNodeAddedToPlacedAsBefore"`
	FinalOnOnePodEach       int     `json:"targetsOnExactlyOneCollector"`
	collectionFigures
}

var _ = Describe("Pod deletion and node loss", Ordered, func() {
	const grace = 15 * time.Second
	const targets = 200
	pool := map[string]string{"gnmic-e2e/pool": "disruption"}
	fleet := harness.Fleet{Namespace: "disruption", Cluster: "telemetry", Replicas: 4, PodCapacity: 100,
		Tune: func(spec *operatorv1alpha1.ClusterSpec) {
			spec.TargetDistribution.UnreadyGracePeriod = &metav1.Duration{Duration: grace}
			spec.NodeSelector = pool
		}}

	It("places 200 targets on 4 pods spread over two nodes that hold two pods each", func() {
		Expect(cp.AddNodes(ctx,
			harness.NodeSpec{Name: "disruption-a", Labels: pool, Pods: 2},
			harness.NodeSpec{Name: "disruption-b", Labels: pool, Pods: 2})).To(Succeed())
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
	})

	It("gives a deleted pod's targets back to its replacement, moving none", func() {
		original := holdingsOf(fleet.Namespace).placement()
		victim := fleet.Cluster + "-1"
		onVictim := 0
		for _, pod := range original {
			if pod == victim {
				onVictim++
			}
		}
		Expect(onVictim).To(BeNumerically(">", 0))
		uidBefore := collectorPodUIDs(fleet)[victim]

		tracker := trackCollection(fleet.Namespace, original)
		start := time.Now()
		Expect(cp.Clientset.CoreV1().Pods(fleet.Namespace).Delete(ctx, victim, metav1.DeleteOptions{})).To(Succeed())
		Eventually(func(g Gomega) {
			uid, ok := collectorPodUIDs(fleet)[victim]
			g.Expect(ok).To(BeTrue())
			g.Expect(uid).NotTo(Equal(uidBefore))
			g.Expect(holdingsOf(fleet.Namespace).placement()).To(Equal(original))
		}).WithTimeout(grace).WithPolling(100 * time.Millisecond).Should(Succeed())
		recollected := time.Since(start)
		figures := tracker.Stop()

		writeResult("pod-deletion", podDeletionResult{
			Scenario: "pod-deletion", GraceSeconds: int(grace.Seconds()), Targets: targets, PodTargets: onVictim,
			SecondsToRecollect: recollected.Round(100 * time.Millisecond).Seconds(), TargetsMoved: figures.Strays,
			FinalOnOnePodEach: len(holdingsOf(fleet.Namespace).placement()), collectionFigures: figures,
		})
		Expect(figures.Strays).To(BeZero(), "targets of a pod within its grace period must wait for it")
		Expect(figures.MaxDuplicated).To(BeZero())
		Expect(figures.MaxUncollected).To(Equal(onVictim), "only the deleted pod's targets wait")
	})

	It("loses a node: its pods keep their targets for the grace period from the node's loss, then the targets move to the pods left, before the pod objects are gone", func() {
		original := holdingsOf(fleet.Namespace).placement()
		var lost []string
		for _, p := range collectorPods(Default, fleet) {
			if p.Spec.NodeName == "disruption-a" {
				lost = append(lost, p.Name)
			}
		}
		sort.Strings(lost)
		Expect(lost).To(HaveLen(2), "the scheduler must have put two pods on each node")
		isLost := map[string]bool{lost[0]: true, lost[1]: true}
		onLost := 0
		for _, pod := range original {
			if isLost[pod] {
				onLost++
			}
		}
		lostUIDs := collectorPodUIDs(fleet)

		tracker := trackCollection(fleet.Namespace, original)
		start := time.Now()
		Expect(cp.DeleteNode(ctx, "disruption-a")).To(Succeed())
		Eventually(func(g Gomega) {
			for _, name := range lost {
				_, running := collectors.Collector(fleet.Namespace, name)
				g.Expect(running).To(BeFalse(), "the collector of %s runs on a deleted node", name)
			}
		}).WithTimeout(10 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())

		By("seeing their targets move to the two pods left once the grace period from the node's loss ends")
		Eventually(func(g Gomega) {
			h := holdingsOf(fleet.Namespace)
			g.Expect(h.placement()).To(HaveLen(targets))
			g.Expect(h.duplicated()).To(BeZero())
		}).WithTimeout(grace + time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		recollected := time.Since(start)
		// The tracker samples on its own clock: wait for it to have seen the move too.
		var firstMove time.Time
		Eventually(func() time.Time {
			firstMove = tracker.Figures().FirstStray
			return firstMove
		}).WithTimeout(time.Second).WithPolling(50 * time.Millisecond).ShouldNot(BeZero())
		podsLeftAtMove := 0
		for name, uid := range collectorPodUIDs(fleet) {
			if isLost[name] && uid == lostUIDs[name] {
				podsLeftAtMove++
			}
		}

		By("waiting for the pod garbage collector to remove the pods of the deleted node")
		Eventually(func(g Gomega) {
			now := collectorPodUIDs(fleet)
			for _, name := range lost {
				g.Expect(now[name]).NotTo(Equal(lostUIDs[name]), "pod %s still there", name)
			}
		}).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		removed := time.Now()

		By("adding a node: the replacement pods take back the targets their ordinals had (their lastPod)")
		added := time.Now()
		Expect(cp.AddNodes(ctx, harness.NodeSpec{Name: "disruption-c", Labels: pool, Pods: 2})).To(Succeed())
		Eventually(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.ReadyReplicas).To(Equal(fleet.Replicas))
			g.Expect(s.Unassigned).To(BeZero())
			for _, name := range lost {
				_, running := collectors.Collector(fleet.Namespace, name)
				g.Expect(running).To(BeTrue(), "collector of the replacement %s", name)
			}
		}).WithTimeout(time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			h := holdingsOf(fleet.Namespace)
			g.Expect(h.duplicated()).To(BeZero())
			g.Expect(h.placement()).To(Equal(original), "every target back on its original pod")
		}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		placedAsBefore := time.Since(added)
		figures := tracker.Stop()

		final := holdingsOf(fleet.Namespace)
		onReturned := 0
		for _, pods := range final {
			for _, p := range pods {
				if isLost[p] {
					onReturned++
				}
			}
		}
		writeResult("node-loss", nodeLossResult{
			Scenario: "node-loss", GraceSeconds: int(grace.Seconds()), Targets: targets, PodsLost: lost, TargetsOnLostPods: onLost,
			SecondsToFirstMove:   firstMove.Sub(start).Round(100 * time.Millisecond).Seconds(),
			SecondsToRecollect:   recollected.Round(100 * time.Millisecond).Seconds(),
			LostPodsLeftAtMove:   podsLeftAtMove,
			SecondsToPodsRemoved: removed.Sub(start).Round(100 * time.Millisecond).Seconds(),
			TargetsMoved:         figures.Strays, TargetsOnReturnedPods: onReturned,
			SecondsToPlacedAsBefore: placedAsBefore.Round(100 * time.Millisecond).Seconds(),
			FinalOnOnePodEach:       len(final.placement()), collectionFigures: figures,
		})
		Expect(final.placement()).To(HaveLen(targets), "every target on exactly one collector")
		Expect(final.duplicated()).To(BeZero())
		Expect(figures.MaxDuplicated).To(BeZero())
		Expect(figures.Strays).To(Equal(onLost), "exactly the lost pods' targets move")
		// The tracker samples every 100 ms and the operator notices the Node's deletion through its watch.
		Expect(firstMove.Sub(start)).To(BeNumerically(">=", grace-2*time.Second), "targets moved before the grace period ended")
		Expect(onReturned).To(Equal(onLost), "the replacement pods take back the targets their ordinals had")
	})
})
