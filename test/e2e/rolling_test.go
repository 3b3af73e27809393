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
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
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
	busyFigures
	// HeldSeconds is, per pod, how long after its blackholed start its new collector first ran all its
	// targets: the other starts waited behind the blackholed one.
	HeldSeconds map[string]float64 `json:"secondsEachNewPodsTargetsWaitedBehindItsBlackhole"`
}

var _ = Describe("Rolling update of the collector image", Ordered, func() {
	fleet := harness.Fleet{Namespace: "rolling", Cluster: "telemetry", Replicas: 4, PodCapacity: 100}
	const targets = 300

	It("places 300 targets on 4 pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
	})

	It("replaces every pod one at a time with busy collectors; each target ends on its original pod, never on two collectors, and at most one pod's targets are ever uncollected", func() {
		original := holdingsOf(fleet.Namespace).placement()
		Expect(original).To(HaveLen(targets))
		uidsBefore := collectorPodUIDs(fleet)
		Expect(uidsBefore).To(HaveLen(int(fleet.Replicas)))

		By("blackholing the device of each pod's first target: a new pod's other starts wait behind it")
		holes := blackholeEach(fleet.Namespace, pickPerPod(original, nil), busyHold)
		DeferCleanup(collectors.ClearBlackholes, fleet.Namespace)
		complete := watchNewCollectorsComplete(fleet, original)
		tracker := trackCollection(fleet.Namespace, original)
		start := time.Now()
		cluster := &operatorv1alpha1.Cluster{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: fleet.Namespace, Name: fleet.Cluster}, cluster)).To(Succeed())
		// The same release built on scratch: a new image whose collectors answer as the fleet's did.
		const newImage = gnmic.DefaultImage + "-scratch"
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
			c := collectionOf(fleet.Namespace)
			g.Expect(c.held.placement()).To(Equal(original))
			g.Expect(c.collecting).To(HaveLen(targets), "every target collected, the blackholed ones restarted")
		}).WithTimeout(3 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		rolled := time.Since(start)
		figures := tracker.Stop()
		started := awaitBlackholes(holes, time.Second)
		completeAt := complete()
		held := map[string]float64{}
		for pod, s := range started {
			Expect(s.pod).To(Equal(pod), "the blackholed start of %s happened on another pod", holes[pod].Target)
			Expect(completeAt).To(HaveKey(pod), "the new collector of %s never ran all its targets", pod)
			held[pod] = completeAt[pod].Sub(s.at).Round(10 * time.Millisecond).Seconds()
		}
		var busy busyFigures
		busy.add(holes)

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
			busyFigures: busy, HeldSeconds: held,
		})
		Expect(replaced).To(Equal(int(fleet.Replicas)), "every pod must have been recreated")
		Expect(onOrigin).To(Equal(targets))
		Expect(figures.Strays).To(BeZero(), "no target may be collected by another pod during the roll")
		Expect(figures.MaxDuplicated).To(BeZero())
		Expect(figures.MaxPodsShort).To(Equal(1), "exactly one pod's targets at a time may wait for their pod")
		Expect(busy.Blackholes).To(Equal(int(fleet.Replicas)), "every new pod must have met its blackholed device")
		for pod, s := range started {
			// The blackholed start is seen within 10 ms of when it began; the new collector runs its other
			// targets only once the start gave up, Hold later.
			Expect(completeAt[pod]).To(BeTemporally(">=", s.at.Add(busyHold-50*time.Millisecond)),
				"the targets of %s did not wait behind its blackholed start", pod)
		}
	})
})

// watchNewCollectorsComplete samples every 20 ms, until the returned function is called, when each pod of
// the fleet first has a new collector (not the one it has now) that runs all the pod's original targets.
func watchNewCollectorsComplete(f harness.Fleet, original map[string]string) func() map[string]time.Time {
	old := map[string]*fakecollector.Collector{}
	want := map[string][]string{}
	for target, pod := range original {
		want[pod] = append(want[pod], target)
		if _, ok := old[pod]; !ok {
			old[pod], _ = collectors.Collector(f.Namespace, pod)
		}
	}
	complete := map[string]time.Time{}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(20 * time.Millisecond)
		defer ticker.Stop()
		for len(complete) < len(want) {
			for pod, targets := range want {
				c, ok := collectors.Collector(f.Namespace, pod)
				if _, seen := complete[pod]; seen || !ok || c == old[pod] {
					continue
				}
				runs := map[string]bool{}
				for _, t := range c.Targets() {
					runs[t] = true
				}
				all := true
				for _, t := range targets {
					all = all && runs[t]
				}
				if all {
					complete[pod] = time.Now()
				}
			}
			select {
			case <-stop:
				return
			case <-ticker.C:
			}
		}
	}()
	return func() map[string]time.Time {
		close(stop)
		<-done
		return complete
	}
}

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
