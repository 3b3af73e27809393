//go:build e2e

package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// recipeResult is one recipe's line in test/e2e/results/recipes.json.
type recipeResult struct {
	Recipe                string  `json:"recipe"`
	SecondsToZeroUnassign float64 `json:"secondsToZeroUnassigned"`
	SecondsToMinimal      float64 `json:"secondsToMinimalReplicasSteady"`
	PeakReplicas          int32   `json:"peakReplicas"`
	MinimalReplicas       int32   `json:"minimalReplicas"`
	ReplicaHistory        []int32 `json:"replicaHistory"`
}

var _ = Describe("Recipes compared: a burst larger than one scale-up step", Ordered, func() {
	const capacity, before, after = 50, 40, 300
	behaviour := autoscaling{minReplicas: 1, maxReplicas: 20, scaleUpPods: 4, scaleUpPeriod: 15, scaleDownWindow: 30}
	demandOnly := harness.Fleet{Namespace: "recipe-demand", Cluster: "telemetry", Replicas: 1, PodCapacity: capacity}
	withOverflow := harness.Fleet{Namespace: "recipe-overflow", Cluster: "telemetry", Replicas: 1, PodCapacity: capacity}
	fleets := []harness.Fleet{demandOnly, withOverflow}

	It("holds two fleets of 40 targets at 1 pod, one per recipe", func() {
		for i, f := range fleets {
			Expect(f.Create(ctx, cp, k8sClient)).To(Succeed())
			Expect(f.AddTargets(ctx, k8sClient, 0, before)).To(Succeed())
			a := behaviour
			a.overflow = i == 1
			_, err := cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(f.Namespace).Create(ctx, autoscaler(f, a), metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		for _, f := range fleets {
			Eventually(func(g Gomega) {
				s, err := f.Observe(ctx, cp, k8sClient, f.Cluster)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(s.ReadyReplicas).To(Equal(int32(1)))
				g.Expect(s.Unassigned).To(BeZero())
				g.Expect(s.HPAReason).To(ContainSubstring("ValidMetricFound"))
				g.Expect(s.HPADesired).To(Equal(int32(1)))
			}).WithTimeout(2*time.Minute).Should(Succeed(), "fleet %s", f.Namespace)
		}
	})

	It("reaches the minimal fleet exactly with targets_demand, and overshoots by up to one step with unassigned_targets", func() {
		minimal := minimalReplicas(after, capacity)
		trackers := []*replicaTracker{trackReplicas(demandOnly), trackReplicas(withOverflow)}
		start := time.Now()
		for _, f := range fleets {
			Expect(f.AddTargets(ctx, k8sClient, before, after)).To(Succeed())
		}
		toZero := make([]time.Duration, len(fleets))
		toMinimal := make([]time.Duration, len(fleets))
		var stableSince [2]time.Time
		Eventually(func(g Gomega) {
			for i, f := range fleets {
				s, err := f.Observe(ctx, cp, k8sClient, "")
				g.Expect(err).NotTo(HaveOccurred())
				if toZero[i] == 0 && s.Targets == after && s.Unassigned == 0 {
					toZero[i] = time.Since(start)
				}
				if s.Replicas == minimal && s.ReadyReplicas == minimal && s.Unassigned == 0 && s.Targets == after {
					if stableSince[i].IsZero() {
						stableSince[i] = time.Now()
					}
				} else {
					stableSince[i] = time.Time{}
				}
			}
			for i := range fleets {
				// Steady: at the minimal fleet for longer than the scale-down window.
				g.Expect(stableSince[i]).NotTo(BeZero(), "fleet %s not at %d replicas", fleets[i].Namespace, minimal)
				g.Expect(time.Since(stableSince[i])).To(BeNumerically(">", time.Duration(behaviour.scaleDownWindow+5)*time.Second))
			}
		}).WithTimeout(4 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		for i := range fleets {
			toMinimal[i] = stableSince[i].Sub(start)
		}

		results := make([]recipeResult, len(fleets))
		for i, name := range []string{"targets_demand (recipe 1)", "targets_demand + unassigned_targets (recipe 2)"} {
			peak, history := trackers[i].Stop()
			results[i] = recipeResult{
				Recipe: name, SecondsToZeroUnassign: toZero[i].Round(100 * time.Millisecond).Seconds(),
				SecondsToMinimal: toMinimal[i].Round(100 * time.Millisecond).Seconds(),
				PeakReplicas:     peak, MinimalReplicas: minimal, ReplicaHistory: history,
			}
		}
		writeResult("recipes", map[string]any{
			"podCapacity": capacity, "targetsBefore": before, "targetsAfter": after,
			"scaleUpPolicy": "4 pods per 15 s", "scaleDownStabilizationSeconds": behaviour.scaleDownWindow, "recipes": results,
		})
		Expect(results[0].PeakReplicas).To(Equal(minimal), "recipe 1 history %v", results[0].ReplicaHistory)
		Expect(results[1].PeakReplicas).To(BeNumerically("<=", 1+2*behaviour.scaleUpPods), "recipe 2 history %v", results[1].ReplicaHistory)
	})
})
