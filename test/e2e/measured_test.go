//go:build e2e

package e2e_test

import (
	"fmt"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// A pod's cost is not its number of targets. Three devices each twenty times as busy as the others, all on one
// collector pod: placing by count leaves that pod saturated (it drops responses above what its one core
// processes) while its neighbours idle; placing by measured weights finds them from the collectors' own
// counters and spreads them, moving only what the new weights force.
// measuredResult is what test/e2e/results/measured-load.json holds; docs/placement.md shows it.
type measuredResult struct {
	Scenario string `json:"scenario"`
	// PodCapacity is what one fake collector pod processes, in responses per second.
	PodCapacity float64 `json:"podResponseCapacity"`
	// OfferedByCount and OfferedByMeasured are the responses per second each pod is offered.
	OfferedByCount    map[string]float64 `json:"offeredByCount"`
	OfferedByMeasured map[string]float64 `json:"offeredByMeasured"`
	SecondsToRelieve  float64            `json:"secondsToRelieve"`
	Moves             int                `json:"moves"`
}

var _ = Describe("Placing by measured load", Ordered, func() {
	fleet := harness.Fleet{Namespace: "measured", Cluster: "telemetry", Replicas: 3}
	const (
		targets  = 30
		capacity = 80.0 // responses per second one collector pod processes
		light    = 2.0
		heavy    = 40.0
	)
	var busy []string // the three busiest targets
	var hotPod string // the pod that held them all while placing by count
	var byCount map[string]string
	result := measuredResult{Scenario: "3 of 30 targets 20x busier, all on one pod", PodCapacity: capacity}

	pods := func() []string {
		out := make([]string, fleet.Replicas)
		for o := range out {
			out[o] = fmt.Sprintf("%s-%d", fleet.Cluster, o)
		}
		return out
	}
	collectorOf := func(g Gomega, pod string) *fakecollector.Collector {
		c, ok := collectors.Collector(fleet.Namespace, pod)
		g.Expect(ok).To(BeTrue(), "no collector runs for pod %s", pod)
		return c
	}
	setRates := func() {
		rates := map[string]float64{}
		for i := range targets {
			rates[harness.TargetName(i)] = light
		}
		for _, name := range busy {
			rates[name] = heavy
		}
		for _, pod := range pods() {
			collectorOf(Default, pod).SetResponseRates(rates)
		}
	}
	saturated := func(g Gomega) map[string]bool {
		out := map[string]bool{}
		for _, pod := range pods() {
			load := collectorOf(g, pod).Load()
			if load.Saturated() {
				out[pod] = true
			}
		}
		return out
	}

	offered := func(g Gomega) map[string]float64 {
		out := map[string]float64{}
		for _, pod := range pods() {
			out[pod] = collectorOf(g, pod).Load().Offered
		}
		return out
	}

	BeforeAll(func() {
		collectors.UseOptions(fleet.Namespace, append(harness.DefaultCollectorOptions(),
			fakecollector.WithResponseCapacity(capacity))...)
	})

	It("places 30 targets by count, 10 on each of 3 pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
		byCount = holdingsOf(fleet.Namespace).placement()
	})

	It("leaves the pod of the three busiest targets saturated while placing by count", func() {
		onPod := map[string][]string{}
		for name, pod := range byCount {
			onPod[pod] = append(onPod[pod], name)
		}
		hotPod = pods()[0]
		busy = append([]string(nil), onPod[hotPod]...)
		sort.Strings(busy)
		Expect(len(busy)).To(BeNumerically(">=", 3))
		busy = busy[:3]
		setRates()

		Eventually(func(g Gomega) {
			g.Expect(saturated(g)).To(Equal(map[string]bool{hotPod: true}))
			_, dropped := collectorOf(g, hotPod).ResponseCounts(busy[0])
			g.Expect(dropped).To(BeNumerically(">", 0), "the hot pod drops responses")
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(holdingsOf(fleet.Namespace).placement()).To(Equal(byCount), "placing by count ignores load")
			g.Expect(saturated(g)).To(HaveKey(hotPod))
		}).WithTimeout(20 * time.Second).WithPolling(time.Second).Should(Succeed())
		result.OfferedByCount = offered(Default)
	})

	It("weighs the busy targets by their measured rates and relieves the hot pod by the fewest moves", func() {
		c := getCluster(Default, fleet)
		patch := client.MergeFrom(c.DeepCopy())
		c.Spec.TargetDistribution.WeighBy = operatorv1alpha1.WeighByMeasured
		c.Spec.TargetDistribution.MeasuredWeights = &operatorv1alpha1.MeasuredWeights{
			Window: &metav1.Duration{Duration: 30 * time.Second}, Hysteresis: &metav1.Duration{Duration: 20 * time.Second}}
		Expect(k8sClient.Patch(ctx, c, patch)).To(Succeed())
		switched := time.Now()

		// 20× the typical rate weighs 16: 27 + 48 = 75 units on 3 pods, capacity 26. The hot pod holds 55
		// units: shedding two busy targets is the fewest that brings it within, and each goes to a pod of its own.
		var placed map[string]string
		Eventually(func(g Gomega) {
			for _, name := range busy {
				st := targetState(g, fleet, name)
				g.Expect(st.Weight).To(BeEquivalentTo(16), "target %s", name)
				g.Expect(st.WeightSource).To(Equal(operatorv1alpha1.WeightSourceMeasured), "target %s", name)
			}
			cl := getCluster(g, fleet)
			g.Expect(cl.Status.TargetUnits).To(BeEquivalentTo(75))
			g.Expect(cl.Status.PodCapacity).To(BeEquivalentTo(26))
			h := holdingsOf(fleet.Namespace)
			g.Expect(h.duplicated()).To(BeZero())
			placed = h.placement()
			g.Expect(placed).To(HaveLen(targets))
			busyPods := map[string]bool{}
			for _, name := range busy {
				busyPods[placed[name]] = true
			}
			g.Expect(busyPods).To(HaveLen(3), "every busy target on a pod of its own")
			g.Expect(saturated(g)).To(BeEmpty())
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		result.SecondsToRelieve = time.Since(switched).Round(time.Second).Seconds()
		GinkgoWriter.Printf("relieved %s after %.0f s\n", hotPod, result.SecondsToRelieve)

		var moved []string
		for name, pod := range placed {
			if pod != byCount[name] {
				moved = append(moved, name)
				Expect(byCount[name]).To(Equal(hotPod), "%s moved from %s, not the hot pod", name, byCount[name])
				Expect(busy).To(ContainElement(name), "a light target moved")
			}
		}
		Expect(moved).To(HaveLen(2))
		Consistently(func(g Gomega) {
			g.Expect(saturated(g)).To(BeEmpty())
			g.Expect(holdingsOf(fleet.Namespace).placement()).To(Equal(placed))
		}).WithTimeout(20 * time.Second).WithPolling(time.Second).Should(Succeed())
		result.OfferedByMeasured, result.Moves = offered(Default), len(moved)
		writeResult("measured-load", result)
	})
})

// targetState is the target's entry for the fleet's Cluster.
func targetState(g Gomega, f harness.Fleet, name string) operatorv1alpha1.TargetClusterState {
	var t operatorv1alpha1.Target
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: f.Namespace, Name: name}, &t)).To(Succeed())
	return t.Status.ClusterStates[f.Cluster]
}
