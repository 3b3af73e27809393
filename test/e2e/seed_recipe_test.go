//go:build e2e

package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// seedRecipeResult is what test/e2e/results/seed-recipe.json holds.
type seedRecipeResult struct {
	Scenario      string `json:"scenario"`
	PodCapacity   int32  `json:"podCapacity"`
	AverageValue  int    `json:"averageValue"`
	TargetsBefore int    `json:"targetsBefore"`
	TargetsAdded  int    `json:"targetsAdded"`
	// Burst: the replicas the autoscaler went through and when no target was left unassigned.
	BurstReplicaHistory   []int32 `json:"burstReplicaHistory"`
	BurstPeakUnassigned   int32   `json:"burstPeakUnassigned"`
	BurstSecondsToZero    float64 `json:"burstSecondsToZeroUnassigned"`
	BurstSecondsToSteady  float64 `json:"burstSecondsToFinalReplicas"`
	ReplicasAfterBurst    int32   `json:"replicasAfterBurst"`
	ManualUpTo            int32   `json:"manualScaleUpTo"`
	ManualUpSecondsKept   float64 `json:"manualScaleUpSecondsUntilReverted"`
	ManualDownTo          int32   `json:"manualScaleDownTo"`
	ManualDownSecondsKept float64 `json:"manualScaleDownSecondsUntilReverted"`
	// With behavior.scaleDown.selectPolicy Disabled the autoscaler never removes pods: a manual scale-up stays.
	DisabledScaleDownKeptSeconds float64 `json:"scaleDownDisabledManualScaleUpKeptSeconds"`
}

// seedHPA is the autoscaler of seed 001 exactly as it is written there: a Pods metric, gnmic_targets_present
// at AverageValue 75, no behavior (the autoscaler's defaults).
const seedHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: dc1-hpa
  namespace: %s
spec:
  scaleTargetRef:
    apiVersion: operator.gnmic.dev/v1alpha1
    kind: Cluster
    name: dc1
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - type: Pods
      pods:
        metric:
          name: gnmic_targets_present
        target:
          type: AverageValue
          averageValue: "75"
`

// The design documents' own autoscaling recipe (seed 001): podCapacity 100 and an autoscaler keeping 75
// targets per pod, through a burst of targets, then a manual `kubectl scale` while the autoscaler is active.
var _ = Describe("The seed's recipe: gnmic_targets_present at 75 per pod, podCapacity 100", Ordered, func() {
	fleet := harness.Fleet{Namespace: "seed-recipe", Cluster: "dc1", Replicas: 3, PodCapacity: 100}
	const before, added, perPod = 240, 150, 75
	result := seedRecipeResult{Scenario: "seed-recipe", PodCapacity: fleet.PodCapacity, AverageValue: perPod,
		TargetsBefore: before, TargetsAdded: added}
	wanted := int32((before + added + perPod - 1) / perPod) // ceil(390 / 75) = 6
	AfterAll(func() {
		writeResult("seed-recipe", result)
		// 8 pods and 390 targets would otherwise run for the rest of the suite.
		Expect(cp.Clientset.CoreV1().Namespaces().Delete(ctx, fleet.Namespace, metav1.DeleteOptions{})).To(Succeed())
	})

	It("holds 240 targets on 3 pods (80 per pod, within the autoscaler's 10 % tolerance of 75)", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, before)).To(Succeed())
		expectPlaced(fleet, before)
		manifest := filepath.Join(GinkgoT().TempDir(), "hpa.yaml")
		Expect(os.WriteFile(manifest, []byte(fmt.Sprintf(seedHPA, fleet.Namespace)), 0o644)).To(Succeed())
		out, err := cp.Kubectl(ctx, "apply", "-f", manifest)
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Eventually(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "dc1-hpa")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.HPAReason).To(ContainSubstring("ValidMetricFound"))
			g.Expect(s.HPACurrent).To(Equal(int32(3)))
			g.Expect(s.HPADesired).To(Equal(int32(3)))
		}).WithTimeout(time.Minute).Should(Succeed())
	})

	It("grows to ceil(390 / 75) = 6 pods through a burst of 150 targets, placing every one", func() {
		tracker := trackReplicas(fleet)
		start := time.Now()
		Expect(fleet.AddTargets(ctx, k8sClient, before, before+added)).To(Succeed())
		Eventually(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			result.BurstPeakUnassigned = max(result.BurstPeakUnassigned, s.Unassigned)
			g.Expect(s.Targets).To(Equal(int32(before + added)))
			g.Expect(s.Unassigned).To(BeZero())
			g.Expect(result.BurstPeakUnassigned).To(BeNumerically(">", 0), "the burst must overflow 3 pods of capacity 100")
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		result.BurstSecondsToZero = time.Since(start).Round(100 * time.Millisecond).Seconds()
		Eventually(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Replicas).To(Equal(wanted))
			g.Expect(s.ReadyReplicas).To(Equal(wanted))
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		result.BurstSecondsToSteady = time.Since(start).Round(100 * time.Millisecond).Seconds()
		Eventually(func() int { return collectedTargets(fleet.Namespace) }).WithTimeout(time.Minute).Should(Equal(before + added))
		By("holding 6 pods for 30 s")
		Consistently(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Replicas).To(Equal(wanted))
			g.Expect(s.Unassigned).To(BeZero())
		}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
		_, result.BurstReplicaHistory = tracker.Stop()
		result.ReplicasAfterBurst = wanted
	})

	It("undoes a manual scale-up and a manual scale-down at its next evaluations: its metric depends on the targets, not on the pods", func() {
		result.ManualUpTo, result.ManualDownTo = wanted+2, wanted-2
		result.ManualUpSecondsKept = manualScale(fleet, wanted+2, wanted)
		result.ManualDownSecondsKept = manualScale(fleet, wanted-2, wanted)
	})

	It("keeps a manual scale-up once its behavior disables scaling down", func() {
		out, err := cp.Kubectl(ctx, "-n", fleet.Namespace, "patch", "hpa", "dc1-hpa", "--type=merge",
			"-p", `{"spec":{"behavior":{"scaleDown":{"selectPolicy":"Disabled"}}}}`)
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		kubectlScale(fleet, wanted+2)
		start := time.Now()
		Consistently(func(g Gomega) {
			s, err := fleet.Observe(ctx, cp, k8sClient, "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Replicas).To(Equal(wanted + 2))
		}).WithTimeout(45 * time.Second).WithPolling(time.Second).Should(Succeed())
		result.DisabledScaleDownKeptSeconds = time.Since(start).Round(time.Second).Seconds()
	})
})

// kubectlScale runs `kubectl scale` on the fleet's Cluster, as a user does.
func kubectlScale(f harness.Fleet, replicas int32) {
	out, err := cp.Kubectl(ctx, "-n", f.Namespace, "scale", "cluster", f.Cluster, "--replicas="+strconv.Itoa(int(replicas)))
	Expect(err).NotTo(HaveOccurred(), "%s", out)
}

// manualScale scales the Cluster by hand to replicas and returns how long, in seconds, until the autoscaler
// set it back to want. A scale-down waits for the highest recommendation of the scale-down stabilization
// window (300 s by default), so the wait allows for all of it.
func manualScale(f harness.Fleet, replicas, want int32) float64 {
	kubectlScale(f, replicas)
	start := time.Now()
	Eventually(func(g Gomega) {
		s, err := f.Observe(ctx, cp, k8sClient, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.Replicas).To(Equal(want))
		g.Expect(s.Unassigned).To(BeZero())
	}).WithTimeout(6 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	return time.Since(start).Round(100 * time.Millisecond).Seconds()
}
