//go:build e2e

package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// unitsAutoscaler is the recipe of docs/autoscaling.md for a Cluster that weighs its targets: recipe 2 with
// the demand and the overflow in weight units.
func unitsAutoscaler(f harness.Fleet, a autoscaling) *autoscalingv2.HorizontalPodAutoscaler {
	a.overflow = true
	hpa := autoscaler(f, a)
	hpa.Spec.Metrics[0].External.Metric.Name = "target_units_demand"
	hpa.Spec.Metrics[1].External.Metric.Name = "unassigned_target_units"
	return hpa
}

var _ = Describe("Autoscaling on weight units: ten devices become eight times heavier", Ordered, func() {
	const capacity, leaves, heavy, weight = 40, 40, 10, 8
	behaviour := autoscaling{minReplicas: 1, maxReplicas: 10, scaleUpPods: 2, scaleUpPeriod: 15, scaleDownWindow: 30}
	declared := func(spec *operatorv1alpha1.ClusterSpec) {
		spec.TargetDistribution.WeighBy = operatorv1alpha1.WeighByDeclared
	}
	counting := harness.Fleet{Namespace: "weights-count", Cluster: "telemetry", Replicas: 1, PodCapacity: capacity}
	weighing := harness.Fleet{Namespace: "weights-declared", Cluster: "telemetry", Replicas: 1, PodCapacity: capacity, Tune: declared}
	fleets := []harness.Fleet{counting, weighing}
	units := leaves - heavy + heavy*weight // 110 units after the change
	minimal := minimalReplicas(units, capacity)

	It("holds 40 targets of weight 1 on one pod of capacity 40, counting or weighing", func() {
		for _, f := range fleets {
			Expect(f.Create(ctx, cp, k8sClient)).To(Succeed())
			Expect(f.AddTargets(ctx, k8sClient, 0, leaves)).To(Succeed())
		}
		_, err := cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(counting.Namespace).
			Create(ctx, autoscaler(counting, autoscaling{minReplicas: 1, maxReplicas: 10, overflow: true, scaleUpPods: 2,
				scaleUpPeriod: 15, scaleDownWindow: 30}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(weighing.Namespace).
			Create(ctx, unitsAutoscaler(weighing, behaviour), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, f := range fleets {
			Eventually(func(g Gomega) {
				s, err := f.Observe(ctx, cp, k8sClient, f.Cluster)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(s.ReadyReplicas).To(Equal(int32(1)))
				g.Expect(s.Targets).To(Equal(int32(leaves)))
				g.Expect(s.Unassigned).To(BeZero())
				g.Expect(s.HPAReason).To(ContainSubstring("ValidMetricFound"))
				g.Expect(s.HPADesired).To(Equal(int32(1)))
			}).WithTimeout(2*time.Minute).Should(Succeed(), "fleet %s", f.Namespace)
		}
	})

	It("scales the weighing fleet to the pods its load needs, while the counting one sees nothing", func() {
		tracker := trackReplicas(weighing)
		start := time.Now()
		for _, f := range fleets {
			for i := range heavy {
				setWeight(f, harness.TargetName(i), weight)
			}
		}
		var toZero time.Duration
		var steadySince time.Time
		Eventually(func(g Gomega) {
			c := cluster(g, weighing)
			settled := c.Status.TargetUnits == int32(units) && c.Status.UnassignedUnits == 0 &&
				c.Status.ReadyReplicas == *c.Spec.Replicas
			if settled && toZero == 0 {
				toZero = time.Since(start)
			}
			for _, col := range c.Status.Collectors {
				g.Expect(col.TargetUnits).To(BeNumerically("<=", capacity), "pod %s", col.Pod)
			}
			if !settled {
				steadySince = time.Time{}
			} else if steadySince.IsZero() {
				steadySince = time.Now()
			}
			g.Expect(steadySince).NotTo(BeZero(), "units %d/%d unassigned %d, replicas %d ready %d",
				c.Status.TargetUnits, units, c.Status.UnassignedUnits, *c.Spec.Replicas, c.Status.ReadyReplicas)
			g.Expect(time.Since(steadySince)).To(BeNumerically(">", time.Duration(behaviour.scaleDownWindow+5)*time.Second))
		}).WithTimeout(4 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		peak, history := tracker.Stop()
		final := cluster(Default, weighing)
		load := map[string]int32{}
		for _, col := range final.Status.Collectors {
			load[col.Pod] = col.TargetUnits
		}

		// The counting fleet holds its 40 targets on one pod: its autoscaler has nothing to act on.
		c := cluster(Default, counting)
		Expect(*c.Spec.Replicas).To(Equal(int32(1)))
		Expect(c.Status.UnassignedTargets).To(BeZero())
		Expect(c.Status.TargetUnits).To(BeEquivalentTo(leaves), "a counting Cluster counts")

		writeResult("weights", map[string]any{
			"podCapacityUnits": capacity, "targets": leaves, "madeHeavy": heavy, "weight": weight, "units": units,
			"minimalReplicas": minimal, "secondsToZeroUnassignedUnits": toZero.Round(100 * time.Millisecond).Seconds(),
			"peakReplicas": peak, "replicaHistory": history, "finalReplicas": *final.Spec.Replicas, "podUnits": load,
			"countingFleetReplicas": *c.Spec.Replicas,
		})
		Expect(*final.Spec.Replicas).To(BeNumerically(">=", minimal))
		Expect(peak).To(BeNumerically("<=", minimal+behaviour.scaleUpPods), "history %v", history)
	})
})

// setWeight declares a Target's weight.
func setWeight(f harness.Fleet, name string, weight int32) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var t operatorv1alpha1.Target
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: f.Namespace, Name: name}, &t); err != nil {
			return err
		}
		t.Spec.Weight = weight
		return k8sClient.Update(ctx, &t)
	})).To(Succeed())
}

// cluster reads the fleet's Cluster.
func cluster(g Gomega, f harness.Fleet) *operatorv1alpha1.Cluster {
	c := &operatorv1alpha1.Cluster{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.Namespace, Name: f.Cluster}, c)).To(Succeed())
	return c
}
