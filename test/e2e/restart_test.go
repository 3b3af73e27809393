//go:build e2e

package e2e_test

import (
	"maps"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// restartResult is what test/e2e/results/operator-restart.json holds.
type restartResult struct {
	Scenario string `json:"scenario"`
	Targets  int    `json:"targets"`
	// Stuck: the operator is killed while one new pod refuses its configuration, its targets in between.
	StuckReplicas            []int32           `json:"stuckRoundReplicas"`
	StuckUncollectedAtKill   int               `json:"stuckRoundUncollectedAtKill"`
	StuckPushesToHealthyPods int               `json:"stuckRoundPushesToHealthyPodsAfterRestart"`
	StuckSecondsToConverge   float64           `json:"stuckRoundSecondsFromFixToConverged"`
	StuckRound               collectionFigures `json:"stuckRound"`
	// Abrupt: the operator is killed the moment a new pod's collector comes up.
	AbruptReplicas           []int32           `json:"abruptRoundReplicas"`
	AbruptMidRebalanceAtKill bool              `json:"abruptRoundKilledMidRebalance"`
	AbruptSecondsToConverge  float64           `json:"abruptRoundSecondsFromKillToConverged"`
	AbruptRound              collectionFigures `json:"abruptRound"`
	OperatorRestartSeconds   float64           `json:"operatorRestartSeconds"`
}

var _ = Describe("Operator restart in the middle of a rebalance", Ordered, func() {
	// Without podCapacity the capacity is ceil(targets/pods): every scale-out moves targets.
	fleet := harness.Fleet{Namespace: "restart", Cluster: "telemetry", Replicas: 3}
	const targets = 300
	var result restartResult

	It("places 300 targets on 3 pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
		result = restartResult{Scenario: "operator-restart", Targets: targets}
	})

	It("is killed while a new pod refuses its configuration; after a restart the healthy pods' targets carry on untouched and everything converges once the pod accepts", func() {
		stuck := fleet.Cluster + "-4"
		collectors.RefuseConfig(fleet.Namespace, stuck, "config store unavailable")
		tracker := trackCollection(fleet.Namespace, holdingsOf(fleet.Namespace).placement())
		scale(fleet, 5)

		By("waiting until the rebalance is stuck on " + stuck + " and everything else is done")
		Eventually(func(g Gomega) {
			c := getCluster(g, fleet)
			cond := meta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionConfigApplied)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Message).To(ContainSubstring(stuck))
			// Handover steps and collectors that act after acknowledging: the other pods are done only once
			// their collectors worked everything off and hold every target not meant for the stuck pod.
			for i := range 4 {
				collector, running := collectors.Collector(fleet.Namespace, fleet.Cluster+"-"+strconv.Itoa(i))
				g.Expect(running).To(BeTrue())
				g.Expect(collector.Idle()).To(BeTrue(), "pod %d still works off its changes", i)
			}
			var list operatorv1alpha1.TargetList
			g.Expect(k8sClient.List(ctx, &list, client.InNamespace(fleet.Namespace))).To(Succeed())
			onStuck := 0
			for _, t := range list.Items {
				st := t.Status.ClusterStates[fleet.Cluster]
				if st.Pod == stuck {
					onStuck++
					continue
				}
				g.Expect(st.State).To(Equal(operatorv1alpha1.TargetAssigned), "target %s", t.Name)
			}
			g.Expect(onStuck).To(BeNumerically(">", 0))
			h := holdingsOf(fleet.Namespace)
			g.Expect(h.duplicated()).To(BeZero())
			g.Expect(h.placement()).To(HaveLen(targets - onStuck))
		}).WithTimeout(time.Minute).Should(Succeed())
		atKill := holdingsOf(fleet.Namespace)
		result.StuckUncollectedAtKill = targets - len(atKill)
		Expect(result.StuckUncollectedAtKill).To(BeNumerically(">", 0), "the kill must land while targets are between pods")
		Expect(atKill.duplicated()).To(BeZero())
		healthyApplies, startsAtKill := applyCounts(fleet, 4), targetStarts(fleet.Namespace, atKill)

		Expect(cp.StopOperator(true)).To(Succeed())
		By("nothing changes on the collectors while the operator is down")
		Consistently(func() holdings { return holdingsOf(fleet.Namespace) }).WithTimeout(2 * time.Second).Should(Equal(atKill))
		restarted := time.Now()
		Expect(cp.RestartOperator(ctx)).To(Succeed())
		result.OperatorRestartSeconds = time.Since(restarted).Round(100 * time.Millisecond).Seconds()

		By("the restarted operator retries " + stuck + " and changes nothing on the healthy pods")
		attemptsBefore := applyAttempts(fleet.Namespace, stuck)
		Eventually(func() int { return applyAttempts(fleet.Namespace, stuck) }).WithTimeout(time.Minute).
			Should(BeNumerically(">", attemptsBefore))
		Consistently(func() holdings { return holdingsOf(fleet.Namespace) }).WithTimeout(3 * time.Second).Should(Equal(atKill))

		for pod, n := range applyCounts(fleet, 4) {
			// A pod pushed by the killed operator after its last status write is pushed the same
			// configuration again: Cluster status is all a new process knows of what each pod acknowledged.
			Expect(n-healthyApplies[pod]).To(BeNumerically("<=", 1), "pushes to %s after the restart", pod)
			result.StuckPushesToHealthyPods += n - healthyApplies[pod]
		}

		fixed := time.Now()
		collectors.AcceptConfig(fleet.Namespace, stuck)
		expectConverged(fleet, targets, 5)
		result.StuckSecondsToConverge = time.Since(fixed).Round(100 * time.Millisecond).Seconds()
		Expect(targetStarts(fleet.Namespace, atKill)).To(Equal(startsAtKill), "a target on a healthy pod was restarted")
		result.StuckReplicas = []int32{3, 5}
		result.StuckRound = tracker.Stop()
		Expect(result.StuckRound.MaxDuplicated).To(BeZero(), "a target was on two collectors")
	})

	It("is killed the moment a new pod's collector comes up; after a restart nothing is lost or duplicated", func() {
		final := fleet.Cluster + "-5"
		tracker := trackCollection(fleet.Namespace, holdingsOf(fleet.Namespace).placement())
		before := holdingsOf(fleet.Namespace).placement()
		scale(fleet, 6)
		Eventually(func() bool {
			_, running := collectors.Collector(fleet.Namespace, final)
			return running
		}).WithTimeout(time.Minute).WithPolling(5 * time.Millisecond).Should(BeTrue())
		Expect(cp.StopOperator(true)).To(Succeed())
		killed := time.Now()
		atKill := holdingsOf(fleet.Namespace)
		Expect(atKill.duplicated()).To(BeZero())
		Expect(cp.RestartOperator(ctx)).To(Succeed())

		expectConverged(fleet, targets, 6)
		result.AbruptSecondsToConverge = time.Since(killed).Round(100 * time.Millisecond).Seconds()
		converged := holdingsOf(fleet.Namespace).placement()
		result.AbruptMidRebalanceAtKill = len(atKill) != targets || !maps.Equal(atKill.placement(), converged)
		Expect(maps.Equal(before, converged)).To(BeFalse(), "scaling out must have moved targets")
		result.AbruptReplicas = []int32{5, 6}
		result.AbruptRound = tracker.Stop()
		writeResult("operator-restart", result)
		Expect(result.AbruptRound.MaxDuplicated).To(BeZero(), "a target was on two collectors")
	})
})

func getCluster(g Gomega, f harness.Fleet) *operatorv1alpha1.Cluster {
	c := &operatorv1alpha1.Cluster{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: f.Namespace, Name: f.Cluster}, c)).To(Succeed())
	return c
}

func scale(f harness.Fleet, replicas int32) {
	c := getCluster(Default, f)
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Replicas = ptr.To(replicas)
	Expect(k8sClient.Patch(ctx, c, patch)).To(Succeed())
}

// applyCounts is how many configurations each of the first n pods' collectors accepted.
func applyCounts(f harness.Fleet, n int) map[string]int {
	out := map[string]int{}
	for i := range n {
		pod := f.Cluster + "-" + strconv.Itoa(i)
		if c, ok := collectors.Collector(f.Namespace, pod); ok {
			out[pod] = c.ApplyCount()
		}
	}
	return out
}

// targetStarts is how often each target held in h was started by the collector holding it.
func targetStarts(namespace string, h holdings) map[string]int {
	out := map[string]int{}
	for target, pods := range h {
		for _, pod := range pods {
			if c, ok := collectors.Collector(namespace, pod); ok {
				out[target+"@"+pod] = c.Counts(target).Starts
			}
		}
	}
	return out
}

// applyAttempts counts the configuration applies a pod's collector received, refused ones included.
func applyAttempts(namespace, pod string) int {
	c, ok := collectors.Collector(namespace, pod)
	if !ok {
		return 0
	}
	n := 0
	for _, r := range c.Requests() {
		if strings.HasSuffix(r.Path, "/config/apply") {
			n++
		}
	}
	return n
}

// expectConverged waits until every target is on exactly one collector, each of the replicas pods holds
// its share, and the Cluster reports its configuration applied with nothing unassigned.
func expectConverged(f harness.Fleet, targets int, replicas int32) {
	share := (targets + int(replicas) - 1) / int(replicas)
	Eventually(func(g Gomega) {
		h := holdingsOf(f.Namespace)
		g.Expect(h.duplicated()).To(BeZero())
		g.Expect(h.placement()).To(HaveLen(targets))
		for pod, held := range collectors.Targets(f.Namespace) {
			g.Expect(len(held)).To(BeNumerically("<=", share), "pod %s over capacity", pod)
		}
		c := getCluster(g, f)
		g.Expect(c.Status.ReadyReplicas).To(Equal(replicas))
		g.Expect(c.Status.UnassignedTargets).To(BeZero())
		g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, operatorv1alpha1.ConditionConfigApplied)).To(BeTrue())
	}).WithTimeout(2 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
}
