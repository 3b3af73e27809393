//go:build e2e

package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// rollingResult is what test/e2e/results/rolling-update.json holds.
type rollingResult struct {
	Scenario      string  `json:"scenario"`
	Pods          int     `json:"pods"`
	Targets       int     `json:"targets"`
	PodCapacity   int32   `json:"podCapacity"`
	SecondsToRoll float64 `json:"secondsToReplaceEveryPodAndCollectEverything"`
	PodsReplaced  int     `json:"podsReplaced"`
	TargetsMoved  int     `json:"targetsMoved"`
	EndedOnOrigin int     `json:"targetsEndingOnTheirOriginalPod"`
	collectionFigures
}

var _ = Describe("Rolling update of the collector image", Ordered, func() {
	fleet := harness.Fleet{Namespace: "rolling", Cluster: "telemetry", Replicas: 4, PodCapacity: 100}
	const targets = 300

	It("places 300 targets on 4 pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
	})

	It("replaces every pod one at a time; each target ends on its original pod and at most one pod's targets are ever uncollected", func() {
		original := holdingsOf(fleet.Namespace).placement()
		Expect(original).To(HaveLen(targets))
		uidsBefore := collectorPodUIDs(fleet)
		Expect(uidsBefore).To(HaveLen(int(fleet.Replicas)))

		tracker := trackCollection(fleet.Namespace, original)
		start := time.Now()
		cluster := &operatorv1alpha1.Cluster{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: fleet.Namespace, Name: fleet.Cluster}, cluster)).To(Succeed())
		const newImage = "ghcr.io/openconfig/gnmic:0.42.1"
		patch := client.MergeFrom(cluster.DeepCopy())
		cluster.Spec.Image = newImage
		Expect(k8sClient.Patch(ctx, cluster, patch)).To(Succeed())

		Eventually(func(g Gomega) {
			pods := collectorPods(g, fleet)
			g.Expect(pods).To(HaveLen(int(fleet.Replicas)))
			for _, p := range pods {
				g.Expect(p.Spec.Containers[0].Image).To(Equal(newImage), "pod %s", p.Name)
				g.Expect(podReady(&p)).To(BeTrue(), "pod %s", p.Name)
			}
			g.Expect(holdingsOf(fleet.Namespace).placement()).To(Equal(original))
		}).WithTimeout(3 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		rolled := time.Since(start)
		figures := tracker.Stop()

		uidsAfter := collectorPodUIDs(fleet)
		replaced := 0
		for name, uid := range uidsAfter {
			if uidsBefore[name] != uid {
				replaced++
			}
		}
		final := holdingsOf(fleet.Namespace).placement()
		onOrigin := 0
		for target, pod := range original {
			if final[target] == pod {
				onOrigin++
			}
		}
		writeResult("rolling-update", rollingResult{
			Scenario: "rolling-update", Pods: int(fleet.Replicas), Targets: targets, PodCapacity: fleet.PodCapacity,
			SecondsToRoll: rolled.Round(100 * time.Millisecond).Seconds(), PodsReplaced: replaced,
			TargetsMoved: figures.Strays, EndedOnOrigin: onOrigin, collectionFigures: figures,
		})
		Expect(replaced).To(Equal(int(fleet.Replicas)), "every pod must have been recreated")
		Expect(onOrigin).To(Equal(targets))
		Expect(figures.Strays).To(BeZero(), "no target may be collected by another pod during the roll")
		Expect(figures.MaxDuplicated).To(BeZero())
		Expect(figures.MaxPodsShort).To(Equal(1), "exactly one pod's targets at a time may wait for their pod")
	})
})

// collectorPods lists the fleet's collector pods.
func collectorPods(g Gomega, f harness.Fleet) []corev1.Pod {
	pods, err := cp.Clientset.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: operatorv1alpha1.ClusterLabel + "=" + f.Cluster})
	g.Expect(err).NotTo(HaveOccurred())
	return pods.Items
}

// collectorPodUIDs maps each collector pod's name to its UID.
func collectorPodUIDs(f harness.Fleet) map[string]types.UID {
	out := map[string]types.UID{}
	for _, p := range collectorPods(Default, f) {
		out[p.Name] = p.UID
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
