//go:build e2e

package e2e_test

import (
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	externalmetricsv1beta1 "k8s.io/metrics/pkg/apis/external_metrics/v1beta1"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// leaderKillResult is what test/e2e/results/leader-kill.json holds.
type leaderKillResult struct {
	Scenario         string  `json:"scenario"`
	Targets          int     `json:"targets"`
	Replicas         []int32 `json:"collectorReplicas"`
	OperatorReplicas int     `json:"operatorReplicas"`
	LeaseSeconds     float64 `json:"leaseDurationSeconds"`
	// OnNewPodsAtKill is how many targets the new collector pods held when the leader was killed, of
	// OnNewPodsAtEnd after convergence: the kill landed in the middle of the moves.
	OnNewPodsAtKill int `json:"targetsOnNewPodsAtKill"`
	OnNewPodsAtEnd  int `json:"targetsOnNewPodsAfterConvergence"`
	// NewLeaderIsOtherReplica: the other replica took over, not the killed pod's restarted container.
	NewLeaderIsOtherReplica bool    `json:"newLeaderIsTheOtherReplica"`
	SecondsToHandover       float64 `json:"secondsFromKillToNewLeader"`
	SecondsToConverge       float64 `json:"secondsFromKillToConverged"`
	TargetsOnOneCollector   int     `json:"targetsOnExactlyOneCollectorAfterConvergence"`
	collectionFigures
}

var _ = Describe("Operator leader killed in the middle of a rebalance", Ordered, func() {
	// Without podCapacity the capacity is ceil(targets/pods): scaling out moves targets to the new pods.
	fleet := harness.Fleet{Namespace: "leader", Cluster: "telemetry", Replicas: 3}
	const targets = 300
	demand := "/apis/external.metrics.k8s.io/v1beta1/namespaces/" + fleet.Namespace + "/targets_demand?labelSelector=cluster%3D" + fleet.Cluster
	var result leaderKillResult

	It("runs the manifests' two replicas: the controllers on the leader only, the metrics API on both", func() {
		replicas := cp.OperatorReplicas()
		Expect(replicas).To(HaveLen(2))
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
		expectLeaderOnlyReconciles()
		for _, r := range cp.OperatorReplicas() {
			Eventually(func() (string, error) { return targetsDemand(r.Pod, demand) }).
				WithTimeout(30*time.Second).Should(Equal(strconv.Itoa(targets)), "metrics API of %s", r.Pod)
		}
		result = leaderKillResult{Scenario: "leader-kill", Targets: targets, OperatorReplicas: len(replicas)}
	})

	It("hands over within the lease duration + 5 s after a SIGKILL of the leader mid-rebalance; after convergence every target is collected exactly once", func() {
		before := holdingsOf(fleet.Namespace).placement()
		tracker := trackCollection(fleet.Namespace, before)
		newPods := map[string]bool{fleet.Cluster + "-3": true, fleet.Cluster + "-4": true, fleet.Cluster + "-5": true}
		onNewPods := func() int {
			n := 0
			for _, pod := range holdingsOf(fleet.Namespace).placement() {
				if newPods[pod] {
					n++
				}
			}
			return n
		}
		leader, err := cp.OperatorLeader(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(leader.Pod).NotTo(BeEmpty())
		scale(fleet, 6)

		By("killing the leader " + leader.Pod + " once the first targets reached the new pods")
		Eventually(onNewPods).WithTimeout(time.Minute).WithPolling(5 * time.Millisecond).Should(BeNumerically(">", 0))
		pid, err := cp.KillOperatorReplica(ctx, leader.Pod)
		Expect(err).NotTo(HaveOccurred())
		killed := time.Now()
		result.OnNewPodsAtKill = onNewPods()
		Expect(holdingsOf(fleet.Namespace).duplicated()).To(BeZero())

		By("waiting for another process to take the Lease")
		var next harness.LeaderLease
		Eventually(func(g Gomega) {
			next, err = cp.OperatorLeader(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(next.Holder).NotTo(BeEmpty())
			g.Expect(next.Holder).NotTo(Equal(leader.Holder))
		}).WithTimeout(leader.Duration + time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		handover := next.AcquireTime.Sub(killed)
		result.LeaseSeconds = leader.Duration.Seconds()
		result.SecondsToHandover = handover.Round(100 * time.Millisecond).Seconds()
		result.NewLeaderIsOtherReplica = next.Pod != leader.Pod
		Expect(handover).To(BeNumerically("<=", leader.Duration+5*time.Second), "handover took %s", handover)
		for _, r := range cp.OperatorReplicas() {
			Expect(r.PID).NotTo(Equal(pid), "the killed process must be gone")
		}

		expectConverged(fleet, targets, 6)
		result.SecondsToConverge = time.Since(killed).Round(100 * time.Millisecond).Seconds()
		final := holdingsOf(fleet.Namespace)
		result.TargetsOnOneCollector = len(final.placement())
		result.OnNewPodsAtEnd = onNewPods()
		result.Replicas = []int32{3, 6}
		result.collectionFigures = tracker.Stop()
		writeResult("leader-kill", result)

		Expect(final.duplicated()).To(BeZero())
		Expect(result.TargetsOnOneCollector).To(Equal(targets))
		Expect(result.OnNewPodsAtKill).To(BeNumerically("<", result.OnNewPodsAtEnd), "the kill must land mid-rebalance")
		Expect(maps.Equal(before, final.placement())).To(BeFalse(), "scaling out must have moved targets")
		Expect(result.MaxDuplicated).To(BeZero(), "a target was on two collectors")

		By("the killed pod's restarted container serves the metrics API again, the controllers still run on the leader only")
		Eventually(func(g Gomega) {
			replicas := cp.OperatorReplicas()
			g.Expect(replicas).To(HaveLen(2))
			for _, r := range replicas {
				g.Expect(r.Ready).To(BeTrue(), "replica %s", r.Pod)
				g.Expect(targetsDemand(r.Pod, demand)).To(Equal(strconv.Itoa(targets)), "metrics API of %s", r.Pod)
			}
		}).WithTimeout(time.Minute).Should(Succeed())
		expectLeaderOnlyReconciles()
	})
})

// expectLeaderOnlyReconciles checks that the replica holding the Lease has reconciled Clusters and that no
// other replica ever has: a follower does not start the controllers (its process has no reconcile counts).
func expectLeaderOnlyReconciles() {
	GinkgoHelper()
	lease, err := cp.OperatorLeader(ctx)
	Expect(err).NotTo(HaveOccurred())
	for _, r := range cp.OperatorReplicas() {
		metrics, err := cp.OperatorMetrics(ctx, r.Pod)
		Expect(err).NotTo(HaveOccurred())
		reconciles := clusterReconciles(metrics)
		if r.Pod == lease.Pod {
			Expect(reconciles).To(BeNumerically(">", 0), "the leader %s reconciled nothing", r.Pod)
		} else {
			Expect(reconciles).To(BeZero(), "follower %s reconciled", r.Pod)
		}
	}
}

// clusterReconciles sums controller_runtime_reconcile_total of the Cluster controller in a scrape.
func clusterReconciles(metrics string) float64 {
	total := 0.0
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, "controller_runtime_reconcile_total{") || !strings.Contains(line, `controller="cluster"`) {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64); err == nil {
			total += v
		}
	}
	return total
}

// targetsDemand asks one operator replica's metrics API for an external metric and returns its value.
func targetsDemand(pod, path string) (string, error) {
	body, err := cp.MetricsAPIGet(ctx, pod, path)
	if err != nil {
		return "", err
	}
	var list externalmetricsv1beta1.ExternalMetricValueList
	if err := json.Unmarshal(body, &list); err != nil {
		return "", err
	}
	if len(list.Items) != 1 {
		return "", nil
	}
	return list.Items[0].Value.String(), nil
}
