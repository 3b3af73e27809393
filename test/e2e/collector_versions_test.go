//go:build e2e

package e2e_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// oldCollectorResult is what test/e2e/results/old-collector.json holds.
type oldCollectorResult struct {
	Scenario string `json:"scenario"`
	Pods     int    `json:"pods"`
	Targets  int    `json:"targets"`
	// SecondsToCondition is from the last old pod's containers being ready to CollectorsSupported False.
	SecondsToCondition float64 `json:"secondsFromPodsReadyToCollectorsSupportedFalse"`
	// WatchedSeconds is how long the old fleet was watched; ApplyAttempts and Probes what its collectors got then.
	WatchedSeconds float64 `json:"secondsWatchedOnTheOldRelease"`
	ApplyAttempts  int     `json:"applyAttemptsWhileWatched"`
	Probes         int     `json:"probesWhileWatched"`
	// SecondsToCollect is from the last rolled pod's containers being ready to every target collected.
	SecondsToCollect float64 `json:"secondsFromLastRolledPodReadyToEveryTargetCollected"`
	TargetsMoved     int     `json:"targetsOnAnotherPodThanBeforeTheRoll"`
}

var _ = Describe("A Cluster on a collector image older than the operator needs", Ordered, func() {
	const oldImage = gnmic.ImageRepository + ":0.42.0"
	fleet := harness.Fleet{Namespace: "old-collector", Cluster: "telemetry", Replicas: 3,
		Tune: func(s *operatorv1alpha1.ClusterSpec) { s.Image = oldImage }}
	const targets = 60
	key := types.NamespacedName{Namespace: fleet.Namespace, Name: fleet.Cluster}
	result := oldCollectorResult{Scenario: "old-collector", Pods: int(fleet.Replicas), Targets: targets}
	var placedBefore map[string]string

	supported := func(g Gomega) *metav1.Condition {
		c := &operatorv1alpha1.Cluster{}
		g.Expect(k8sClient.Get(ctx, key, c)).To(Succeed())
		cond := meta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionCollectorsSupported)
		g.Expect(cond).NotTo(BeNil())
		return cond
	}
	// requests counts what the fleet's collectors received: POST /api/v1/config/apply, and the probe.
	requests := func() (applies, probes int) {
		for _, p := range collectorPods(Default, fleet) {
			col, ok := collectors.Collector(fleet.Namespace, p.Name)
			if !ok {
				continue
			}
			for _, r := range col.Requests() {
				switch {
				case r.Method == http.MethodPost && r.Path == "/api/v1/config/apply":
					applies++
				case r.Method == http.MethodPost && strings.HasPrefix(r.Path, "/api/v1/config/targets/"):
					probes++
				}
			}
		}
		return applies, probes
	}
	gates := func() map[string]metav1.Time {
		out := map[string]metav1.Time{}
		for _, p := range collectorPods(Default, fleet) {
			for _, c := range p.Status.Conditions {
				if c.Type == operatorv1alpha1.ConditionPodConfigured {
					out[p.Name] = c.LastTransitionTime
				}
			}
		}
		return out
	}
	containersReadySince := func(g Gomega) time.Time {
		var last time.Time
		pods := collectorPods(g, fleet)
		g.Expect(pods).To(HaveLen(int(fleet.Replicas)))
		for _, p := range pods {
			found := false
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.ContainersReady && c.Status == corev1.ConditionTrue {
					found = true
					if c.LastTransitionTime.After(last) {
						last = c.LastTransitionTime.Time
					}
				}
			}
			g.Expect(found).To(BeTrue(), "pod %s containers not ready", p.Name)
		}
		return last
	}

	It("reports a Cluster on gNMIc 0.42 CollectorsSupported False within a poll of its pods' start", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		var podsReady time.Time
		Eventually(func(g Gomega) {
			podsReady = containersReadySince(g)
			c := supported(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonCollectorTooOld))
			g.Expect(c.Message).To(ContainSubstring(oldImage))
			g.Expect(c.Message).To(ContainSubstring("telemetry-0, telemetry-1, telemetry-2"))
			g.Expect(c.Message).To(ContainSubstring("config apply (0.43.0)"))
			result.SecondsToCondition = c.LastTransitionTime.Sub(podsReady).Seconds()
		}).WithTimeout(2 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		// The condition's time is whole seconds: it may read a little before the pods' own.
		Expect(result.SecondsToCondition).To(BeNumerically("<", 60), "later than the 60 s poll")
		Eventually(func(g Gomega) {
			for _, p := range collectorPods(g, fleet) {
				var gate *corev1.PodCondition
				for i := range p.Status.Conditions {
					if p.Status.Conditions[i].Type == operatorv1alpha1.ConditionPodConfigured {
						gate = &p.Status.Conditions[i]
					}
				}
				g.Expect(gate).NotTo(BeNil(), "pod %s has no readiness gate condition", p.Name)
				g.Expect(gate.Reason).To(Equal(operatorv1alpha1.ReasonCollectorTooOld), "pod %s", p.Name)
			}
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})

	It("pushes nothing to its collectors, asks each once, keeps the readiness gates and the placement as they are", func() {
		Eventually(func() map[string]string { placedBefore = statusPlacement(fleet); return placedBefore }).
			WithTimeout(time.Minute).Should(HaveLen(targets), "every target placed on a pod, though nothing collects it")
		applies, probes := requests()
		before := gates()
		start := time.Now()
		Consistently(func(g Gomega) {
			a, p := requests()
			g.Expect(a).To(Equal(applies), "an apply was sent")
			g.Expect(p).To(Equal(probes), "a collector was asked again within a minute")
			g.Expect(gates()).To(Equal(before), "a readiness gate changed")
			g.Expect(statusPlacement(fleet)).To(Equal(placedBefore))
		}).WithTimeout(20 * time.Second).WithPolling(time.Second).Should(Succeed())
		result.WatchedSeconds = time.Since(start).Round(time.Second).Seconds()
		result.ApplyAttempts, result.Probes = applies, probes
		Expect(applies).To(BeZero())
		Expect(probes).To(Equal(int(fleet.Replicas)), "each collector is probed once")
	})

	It("collects every target within 30 s of the rolled pods' readiness, each on the pod it was placed on", func() {
		c := &operatorv1alpha1.Cluster{}
		Expect(k8sClient.Get(ctx, key, c)).To(Succeed())
		patch := client.MergeFrom(c.DeepCopy())
		c.Spec.Image = gnmic.DefaultImage
		Expect(k8sClient.Patch(ctx, c, patch)).To(Succeed())

		var lastReady time.Time
		Eventually(func(g Gomega) {
			pods := collectorPods(g, fleet)
			g.Expect(pods).To(HaveLen(int(fleet.Replicas)))
			for _, p := range pods {
				g.Expect(p.Spec.Containers[0].Image).To(Equal(gnmic.DefaultImage), "pod %s not rolled", p.Name)
			}
			lastReady = containersReadySince(g)
			got := collectionOf(fleet.Namespace)
			g.Expect(got.collecting).To(HaveLen(targets))
		}).WithTimeout(4 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		result.SecondsToCollect = time.Since(lastReady).Round(100 * time.Millisecond).Seconds()
		final := holdingsOf(fleet.Namespace).placement()
		for target, pod := range placedBefore {
			if final[target] != pod {
				result.TargetsMoved++
			}
		}
		Eventually(func(g Gomega) {
			g.Expect(supported(g).Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(time.Minute).Should(Succeed())
		expectPlaced(fleet, targets)
		writeResult("old-collector", result)
		Expect(result.SecondsToCollect).To(BeNumerically("<", 30))
		Expect(result.TargetsMoved).To(BeZero(), "a target moved beyond the rolling update's own")
	})
})

// statusPlacement is each Target's pod as its status says for the fleet's Cluster.
func statusPlacement(f harness.Fleet) map[string]string {
	var list operatorv1alpha1.TargetList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(f.Namespace))).To(Succeed())
	out := map[string]string{}
	for _, t := range list.Items {
		if pod := t.Status.ClusterStates[f.Cluster].Pod; pod != "" {
			out[t.Name] = pod
		}
	}
	return out
}
