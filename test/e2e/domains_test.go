//go:build e2e

package e2e_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// domainsResult is what test/e2e/results/domains.json holds; docs/balancer.md shows it.
type domainsResult struct {
	Scenario              string `json:"scenario"`
	Targets               int    `json:"targets"`
	GraceSeconds          int    `json:"unreadyGracePeriodSeconds"`
	StartupTimeoutSeconds int    `json:"startupTimeoutSeconds"`
	// Zone C's nodes deleted.
	TargetsOnLostZone     int     `json:"targetsOnTheLostZonesPods"`
	SecondsToRecollect    float64 `json:"secondsFromZoneLossToEveryTargetCollected"`
	MovesOnLoss           int     `json:"targetsMovedOnLoss"`
	LowerBoundOnLoss      int     `json:"lowerBoundOnLoss"`
	SecondsToReplacements float64 `json:"secondsFromZoneLossToReplacementsWritten"`
	SecondsToSpread       float64 `json:"secondsFromZoneLossToTargetsSpreadOverTheReplacements"`
	MovesOnReplacements   int     `json:"targetsMovedOntoTheReplacements"`
	LowerBoundOnReplace   int     `json:"lowerBoundOnReplacements"`
	// Zone C's nodes back.
	SecondsToZoneReady   float64 `json:"secondsFromZoneReturnToItsPodsReady"`
	SecondsToRestored    float64 `json:"secondsFromZoneReturnToReplicasRestored"`
	SecondsToSettled     float64 `json:"secondsFromZoneReturnToEveryTargetOnTheSixPods"`
	MovesOnReturn        int     `json:"targetsMovedOnReturn"`
	LowerBoundOnReturn   int     `json:"lowerBoundOnReturn"`
	MaxDuplicated        int     `json:"maxTargetsOnTwoCollectors"`
	UncollectedTargetSec float64 `json:"uncollectedTargetSeconds"`
	Samples              int     `json:"samples"`
}

var _ = Describe("Cluster across three failure domains", Ordered, func() {
	const (
		ns             = "domains"
		targets        = 300
		grace          = 15 * time.Second
		startupTimeout = 20 * time.Second
	)
	zones := []string{"zone-a", "zone-b", "zone-c"}
	// zoneNodes are a zone's two nodes of a generation: a zone that returns comes back on new machines (the
	// harness never runs collectors on a node name it saw deleted).
	zoneNodes := func(zone string, generation int) []harness.NodeSpec {
		labels := map[string]string{corev1.LabelTopologyZone: "domains-" + zone}
		name := func(i int) string { return fmt.Sprintf("domains-%s-%d", zone, 2*generation+i) }
		return []harness.NodeSpec{{Name: name(0), Labels: labels, Pods: 5}, {Name: name(1), Labels: labels, Pods: 5}}
	}
	fleet := harness.Fleet{Namespace: ns, Cluster: "telemetry", Replicas: 6, Tune: func(spec *operatorv1alpha1.ClusterSpec) {
		spec.TargetDistribution.UnreadyGracePeriod = &metav1.Duration{Duration: grace}
		spec.Tolerations = []corev1.Toleration{{Key: "gnmic-e2e/domains", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		shares := map[string]int32{}
		for _, zone := range zones {
			spec.Domains = append(spec.Domains, operatorv1alpha1.ClusterDomain{Name: zone,
				NodeSelector: map[string]string{corev1.LabelTopologyZone: "domains-" + zone}})
			shares[zone] = 1
		}
		spec.DomainPolicy = &operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerProportional,
			Proportions: &operatorv1alpha1.ProportionalPolicy{TargetProportions: shares},
			Fallback:    &operatorv1alpha1.BalancerFallback{StartupTimeout: metav1.Duration{Duration: startupTimeout}}}
	}}
	result := domainsResult{Scenario: "domains", Targets: targets, GraceSeconds: int(grace.Seconds()),
		StartupTimeoutSeconds: int(startupTimeout.Seconds())}
	var tracker *collectionTracker

	addZone := func(zone string, generation int) {
		specs := zoneNodes(zone, generation)
		Expect(cp.AddNodes(ctx, specs...)).To(Succeed())
		for _, node := range specs {
			// Only this scenario's pods tolerate the taint: the suite's other collector pods stay off these nodes.
			patchPoolNode(node.Name, `{"spec":{"taints":[{"key":"gnmic-e2e/domains","value":"true","effect":"NoSchedule"}]}}`)
		}
	}

	BeforeAll(func() {
		for _, zone := range zones {
			addZone(zone, 0)
		}
	})
	AfterAll(func() {
		if tracker != nil {
			tracker.Stop()
		}
		writeResult("domains", result)
	})

	It("runs a StatefulSet of 2 pods in each of 3 zones and places 300 targets over the 6 pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
		for _, zone := range zones {
			Expect(domainReplicas(Default, fleet, zone)).To(Equal(int32(2)))
			Expect(readyDomainPods(Default, fleet, zone)).To(Equal(2))
		}
		Expect(podLoads(holdingsOf(ns).placement())).To(HaveEach(50))
	})

	It("loses zone C: its targets move after the grace period, never onto two collectors, and its replicas run in zones A and B after startupTimeout", func() {
		original := holdingsOf(ns).placement()
		lostPods := map[string]bool{}
		for _, pod := range original {
			if domainOfPod(fleet, pod) == "zone-c" {
				lostPods[pod] = true
			}
		}
		for _, pod := range original {
			if lostPods[pod] {
				result.TargetsOnLostZone++
			}
		}
		Expect(lostPods).To(HaveLen(2))
		tracker = trackCollection(ns, original)

		By("deleting zone C's nodes, as a zone outage does")
		start := time.Now()
		for _, node := range zoneNodes("zone-c", 0) {
			Expect(cp.DeleteNode(ctx, node.Name)).To(Succeed())
		}
		// The harness closes a lost node's collectors when its informer sees the deletion: until then the
		// lost pods still collect, and the check below would pass at once.
		Eventually(func(g Gomega) {
			runs := collectors.Runs(ns)
			for pod := range lostPods {
				g.Expect(runs).NotTo(HaveKey(pod), "the collector of %s on a deleted node", pod)
			}
		}).WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			c := collectionOf(ns)
			g.Expect(c.collecting).To(HaveLen(targets))
			g.Expect(c.held.duplicated()).To(BeZero())
		}).WithTimeout(grace + time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		result.SecondsToRecollect = roundedSeconds(time.Since(start))
		afterLoss := holdingsOf(ns).placement()
		result.MovesOnLoss, result.LowerBoundOnLoss = movedTargets(original, afterLoss), result.TargetsOnLostZone
		Expect(time.Since(start)).To(BeNumerically(">=", grace-2*time.Second), "targets waited for the grace period")
		Expect(result.MovesOnLoss).To(Equal(result.LowerBoundOnLoss), "exactly the lost zone's targets move")

		By("waiting for the startup timeout: zones A and B run zone C's 2 replicas")
		Eventually(func(g Gomega) {
			g.Expect(domainReplicas(g, fleet, "zone-a")).To(Equal(int32(3)))
			g.Expect(domainReplicas(g, fleet, "zone-b")).To(Equal(int32(3)))
		}).WithTimeout(startupTimeout + time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		result.SecondsToReplacements = roundedSeconds(time.Since(start))
		Expect(time.Since(start)).To(BeNumerically(">=", startupTimeout-time.Second), "not before the startup timeout")
		Expect(domainReplicas(Default, fleet, "zone-c")).To(Equal(int32(2)), "zone C keeps its share, so that its pods start when it returns")

		Eventually(func(g Gomega) {
			h := holdingsOf(ns)
			g.Expect(h.duplicated()).To(BeZero())
			placement := h.placement()
			g.Expect(placement).To(HaveLen(targets))
			g.Expect(podLoads(placement)).To(HaveLen(6))
			g.Expect(podLoads(placement)).To(HaveEach(50))
		}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		result.SecondsToSpread = roundedSeconds(time.Since(start))
		spread := holdingsOf(ns).placement()
		result.MovesOnReplacements = movedTargets(afterLoss, spread)
		result.LowerBoundOnReplace = excessOver(afterLoss, 50)
		Expect(result.MovesOnReplacements).To(Equal(result.LowerBoundOnReplace), "only what capacity requires moves to the replacements")

		Eventually(func(g Gomega) {
			c := getCluster(g, fleet)
			fallback := meta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionDomainFallback)
			g.Expect(fallback).NotTo(BeNil())
			g.Expect(fallback.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Status.Domains).To(ContainElement(And(HaveField("Name", "zone-c"), HaveField("Blocked", true))))
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("gets zone C back: its pods start, the replacements go, and placement moves only what capacity requires", func() {
		By("waiting for the pod garbage collector to recreate zone C's pods, Pending: the zone is still waited for")
		Eventually(func(g Gomega) {
			pods := domainPods(g, fleet, "zone-c")
			g.Expect(pods).To(HaveLen(2))
			for _, p := range pods {
				g.Expect(p.Spec.NodeName).To(BeEmpty(), "pod %s is still bound to a deleted node", p.Name)
			}
		}).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(domainReplicas(g, fleet, "zone-a")).To(Equal(int32(3)), "recreated pods do not restart the startup timeout")
		}).WithTimeout(3 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		before := holdingsOf(ns).placement()

		By("adding zone C's nodes again")
		start := time.Now()
		addZone("zone-c", 1)
		Eventually(func(g Gomega) {
			g.Expect(readyDomainPods(g, fleet, "zone-c")).To(Equal(2), describePods(domainPods(g, fleet, "zone-c")))
		}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		result.SecondsToZoneReady = roundedSeconds(time.Since(start))
		Eventually(func(g Gomega) {
			for _, zone := range zones {
				g.Expect(domainReplicas(g, fleet, zone)).To(Equal(int32(2)), zone)
			}
		}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		result.SecondsToRestored = roundedSeconds(time.Since(start))
		Eventually(func(g Gomega) {
			h := holdingsOf(ns)
			g.Expect(h.duplicated()).To(BeZero())
			placement := h.placement()
			g.Expect(placement).To(HaveLen(targets))
			g.Expect(podLoads(placement)).To(HaveLen(6))
			g.Expect(podLoads(placement)).To(HaveEach(50))
			for _, zone := range zones {
				g.Expect(livePodsOfDomain(g, fleet, zone)).To(Equal(2), zone)
			}
		}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		result.SecondsToSettled = roundedSeconds(time.Since(start))
		after := holdingsOf(ns).placement()
		result.MovesOnReturn = movedTargets(before, after)
		result.LowerBoundOnReturn = returnLowerBound(before, after, 50)

		figures := tracker.Stop()
		tracker = nil
		result.MaxDuplicated, result.UncollectedTargetSec, result.Samples = figures.MaxDuplicated, figures.UncollectedTargetSeconds, figures.Samples
		Expect(figures.MaxDuplicated).To(BeZero(), "no target was ever run by two collectors")
		Expect(result.MovesOnReturn).To(Equal(result.LowerBoundOnReturn), "only what capacity requires moves back")
		Eventually(func(g Gomega) {
			c := getCluster(g, fleet)
			g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, operatorv1alpha1.ConditionDomainFallback)).To(BeFalse())
			g.Expect(c.Status.ReadyReplicas).To(Equal(int32(6)))
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})
})

// domainReplicas is spec.replicas of the domain's StatefulSet.
func domainReplicas(g Gomega, f harness.Fleet, domain string) int32 {
	var sts appsv1.StatefulSet
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.Namespace, Name: f.Cluster + "-" + domain}, &sts)).To(Succeed())
	return *sts.Spec.Replicas
}

// domainPods are the domain's pods that are not terminating.
func domainPods(g Gomega, f harness.Fleet, domain string) []corev1.Pod {
	var pods corev1.PodList
	g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(f.Namespace), client.MatchingLabels{
		operatorv1alpha1.ClusterLabel: f.Cluster, operatorv1alpha1.DomainLabel: domain})).To(Succeed())
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func livePodsOfDomain(g Gomega, f harness.Fleet, domain string) int {
	return len(domainPods(g, f, domain))
}

func readyDomainPods(g Gomega, f harness.Fleet, domain string) int {
	n := 0
	for _, p := range domainPods(g, f, domain) {
		if podReady(&p) {
			n++
		}
	}
	return n
}

// domainOfPod is the domain of a pod <cluster>-<domain>-<ordinal>.
func domainOfPod(f harness.Fleet, pod string) string {
	for _, zone := range []string{"zone-a", "zone-b", "zone-c"} {
		var ordinal int
		if _, err := fmt.Sscanf(pod, f.Cluster+"-"+zone+"-%d", &ordinal); err == nil {
			return zone
		}
	}
	return ""
}

// podLoads is the number of targets on each pod.
func podLoads(placement map[string]string) map[string]int {
	out := map[string]int{}
	for _, pod := range placement {
		out[pod]++
	}
	return out
}

// movedTargets counts the targets on another pod in after than in before.
func movedTargets(before, after map[string]string) int {
	n := 0
	for t, pod := range before {
		if after[t] != pod {
			n++
		}
	}
	return n
}

// excessOver is the fewest moves that bring every pod to at most capacity targets.
func excessOver(placement map[string]string, capacity int) int {
	n := 0
	for _, load := range podLoads(placement) {
		n += max(load-capacity, 0)
	}
	return n
}

// returnLowerBound is the fewest moves from before to a placement over after's pods with capacity: every
// target of a pod that is gone, and what the pods left hold beyond capacity.
func returnLowerBound(before, after map[string]string, capacity int) int {
	kept := map[string]bool{}
	for _, pod := range after {
		kept[pod] = true
	}
	n := 0
	for pod, load := range podLoads(before) {
		if kept[pod] {
			n += max(load-capacity, 0)
		} else {
			n += load
		}
	}
	return n
}

// describePods says where each pod is and what its conditions say, for a failure message.
func describePods(pods []corev1.Pod) string {
	out := ""
	for _, p := range pods {
		out += fmt.Sprintf("%s on %q, %s:", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, c := range p.Status.Conditions {
			out += fmt.Sprintf(" %s=%s", c.Type, c.Status)
		}
		out += "\n"
	}
	return out
}
