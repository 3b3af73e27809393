//go:build e2e && scale

package e2e_test

import (
	"os"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// bulkResult is what test/e2e/results/bulk-arrival.json holds.
type bulkResult struct {
	Scenario string `json:"scenario"`
	Pods     int    `json:"pods"`
	Targets  int    `json:"targets"`
	// CreateSeconds is how long the API server took to accept every Target.
	CreateSeconds float64 `json:"secondsToCreateEveryTarget"`
	// CollectedAfterLastCreate runs from the last Target's create until every target runs on exactly one
	// collector and collects; StatusAfterLastCreate until every Target's status says Assigned and collecting.
	CollectedAfterLastCreate float64 `json:"secondsFromLastCreateToFullyCollected"`
	StatusAfterLastCreate    float64 `json:"secondsFromLastCreateToEveryStatusAssignedAndCollecting"`
	// OperatorCPUSeconds is the CPU time (user + system) of every operator container from the first create
	// until every status was written.
	OperatorCPUSeconds float64 `json:"operatorCPUSeconds"`
	// OperatorCPUByPod is the same per operator container: the leader's, and the standby's informers.
	OperatorCPUByPod map[string]float64 `json:"operatorCPUSecondsByPod"`
	// APIServerCPUSeconds is the kube-apiserver's CPU time over the same span.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds"`
	// Applies is how many configurations the collectors were sent in all; LargestApply the most target
	// changes one of them carried.
	Applies      int `json:"applies"`
	LargestApply int `json:"largestApplyTargetChanges"`
	Dropped      int `json:"droppedTargetChanges"`
	// StatusWrites counts the Targets' modifications (their status writes) until every status was right;
	// ClusterReconciles the leader's reconciles of Clusters over the same span.
	StatusWrites      int `json:"targetStatusWrites"`
	ClusterReconciles int `json:"clusterReconciles"`
	collectionFigures
}

// Bulk arrival: not part of `make test-e2e` (build tag scale); `make bench-bulk` runs it. BULK_TARGETS and
// BULK_PODS size it (default 5,000 targets on 10 pods).
var _ = Describe("Bulk arrival: thousands of Targets created at once", Ordered, func() {
	targets := envInt("BULK_TARGETS", 5000)
	fleet := harness.Fleet{Namespace: "bulk-arrival", Cluster: "telemetry", Replicas: int32(envInt("BULK_PODS", 10))}

	It("runs empty pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		expectPlaced(fleet, 0)
	})

	It("collects every target soon after the last one is created, for little operator CPU", func() {
		tracker := trackCollection(fleet.Namespace, nil)
		cpuBefore, err := cp.OperatorCPU()
		Expect(err).NotTo(HaveOccurred())
		apiServer := cp.PIDs()["kube-apiserver"]
		apiServerBefore, err := harness.ProcessCPU(apiServer)
		Expect(err).NotTo(HaveOccurred())
		reconcilesBefore := leaderClusterReconciles()
		// With E2E_CPU_PROFILE, the arrival's first 30 s of operator CPU.
		profiled := cpuProfile(30)
		statuses := watchStatuses(fleet.Namespace, fleet.Cluster, targets)
		start := time.Now()
		createConcurrently(fleet, targets, tracker.Expect)
		lastCreate := time.Now()

		Eventually(func(g Gomega) {
			c := collectionOf(fleet.Namespace)
			g.Expect(c.held.placement()).To(HaveLen(targets))
			g.Expect(c.collecting).To(HaveLen(targets))
		}).WithTimeout(10 * time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		collected := time.Since(lastCreate)

		statusDone := max(0, statuses.wait(10*time.Minute).Sub(lastCreate))
		statusWrites := statuses.modifications()
		reconciles := leaderClusterReconciles() - reconcilesBefore
		cpuAfter, err := cp.OperatorCPU()
		Expect(err).NotTo(HaveOccurred())
		apiServerAfter, err := harness.ProcessCPU(apiServer)
		Expect(err).NotTo(HaveOccurred())
		cpu := harness.CPUSince(cpuBefore, cpuAfter)
		profiled()
		figures := tracker.Stop()

		res := bulkResult{Scenario: "bulk-arrival", Pods: int(fleet.Replicas), Targets: targets,
			CreateSeconds:            lastCreate.Sub(start).Round(100 * time.Millisecond).Seconds(),
			CollectedAfterLastCreate: collected.Round(100 * time.Millisecond).Seconds(),
			StatusAfterLastCreate:    statusDone.Round(100 * time.Millisecond).Seconds(),
			OperatorCPUSeconds:       cpu.Round(100 * time.Millisecond).Seconds(),
			APIServerCPUSeconds:      (apiServerAfter - apiServerBefore).Round(100 * time.Millisecond).Seconds(),
			collectionFigures:        figures,
			OperatorCPUByPod:         map[string]float64{},
			StatusWrites:             statusWrites,
			ClusterReconciles:        reconciles,
		}
		for pod, a := range cpuAfter {
			one := map[string]harness.ProcessTime{pod: a}
			res.OperatorCPUByPod[pod] = harness.CPUSince(cpuBefore, one).Round(100 * time.Millisecond).Seconds()
		}
		for i := range int(fleet.Replicas) {
			pod := fleet.Cluster + "-" + strconv.Itoa(i)
			c, ok := collectors.Collector(fleet.Namespace, pod)
			Expect(ok).To(BeTrue(), "collector of %s", pod)
			for _, a := range c.Applied() {
				t := a.Changes.Targets
				res.LargestApply = max(res.LargestApply, len(t.Added)+len(t.Removed)+len(t.Changed))
			}
			res.Applies += c.ApplyCount()
			res.Dropped += c.Dropped()
		}
		writeResult("bulk-arrival", res)
		Expect(res.Dropped).To(BeZero())
		Expect(figures.MaxDuplicated).To(BeZero(), "a target was on two collectors")
	})
})

// leaderClusterReconciles is how many reconciles of Clusters the operator's leader has made so far.
func leaderClusterReconciles() int {
	lease, err := cp.OperatorLeader(ctx)
	Expect(err).NotTo(HaveOccurred())
	text, err := cp.OperatorMetrics(ctx, lease.Pod)
	Expect(err).NotTo(HaveOccurred())
	return int(clusterReconciles(text))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
