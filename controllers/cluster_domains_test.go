package controllers_test

import (
	"net"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/domains"
)

var _ = Describe("Cluster across failure domains", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	It("runs one StatefulSet per domain with its share of spec.replicas, and places targets over every domain's pods", func() {
		f := newFleetWith(0, func(c *operatorv1alpha1.Cluster) {
			c.Spec.Replicas = ptr.To(int32(6))
			c.Spec.NodeSelector = map[string]string{"pool": "collectors"}
			for _, zone := range []string{"zone-a", "zone-b", "zone-c"} {
				c.Spec.Domains = append(c.Spec.Domains, operatorv1alpha1.ClusterDomain{Name: zone,
					NodeSelector: map[string]string{"topology.kubernetes.io/zone": zone}})
			}
		})
		for i, zone := range f.domains {
			sts := f.domainStatefulSet(zone)
			Expect(*sts.Spec.Replicas).To(BeEquivalentTo(2), "zone %s runs a third of 6", zone)
			Expect(sts.Spec.Selector.MatchLabels).To(Equal(map[string]string{
				operatorv1alpha1.ClusterLabel: f.name, operatorv1alpha1.DomainLabel: zone}))
			Expect(sts.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{
				"pool": "collectors", "topology.kubernetes.io/zone": zone}))
			Expect(sts.Spec.ServiceName).To(Equal(f.name), "every domain's pods answer through the Cluster's Service")
			f.addPod(domains.Slot(i, 0))
			f.addPod(domains.Slot(i, 1))
		}
		Expect(k8sClient.Get(suiteCtx, f.key(), &appsv1.StatefulSet{})).To(Satisfy(apierrors.IsNotFound),
			"a Cluster with domains has no StatefulSet named after it")

		f.addTargets(0, 30)
		held := f.converged(30, 0)
		Expect(loads(held)).To(Equal([]int{5, 5, 5, 5, 5, 5}))
		c := f.cluster()
		Expect(c.Status.Summary).To(Equal("6/6 pods ready, 30 targets, 0 unassigned"))
		Expect(c.Status.Domains).To(HaveLen(3))
		for _, d := range c.Status.Domains {
			Expect(d).To(Equal(operatorv1alpha1.ClusterDomainStatus{Name: d.Name, Desired: 2, Current: 2, Ready: 2}))
		}
		Expect(condition(c, operatorv1alpha1.ConditionDomainsPlaced).Status).To(Equal(metav1.ConditionTrue))
		Expect(condition(c, operatorv1alpha1.ConditionDomainFallback).Reason).To(Equal(operatorv1alpha1.ReasonFallbackOff))
		Expect(f.statusPods()).To(HaveKeyWithValue(targetName(0), MatchRegexp(`^fleet-zone-[abc]-[01]$`)))
	})

	It("re-places a lost domain's targets after the grace period, runs its replicas elsewhere after startupTimeout, and brings them back when it starts", func() {
		f := newFleetWith(0, func(c *operatorv1alpha1.Cluster) {
			c.Spec.Replicas = ptr.To(int32(4))
			c.Spec.TargetDistribution.UnreadyGracePeriod = &metav1.Duration{Duration: 2 * time.Second}
			c.Spec.Domains = []operatorv1alpha1.ClusterDomain{{Name: "zone-a"}, {Name: "zone-b"}}
			c.Spec.DomainPolicy = &operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerProportional,
				Proportions: &operatorv1alpha1.ProportionalPolicy{TargetProportions: map[string]int32{"zone-a": 1, "zone-b": 1}},
				Fallback:    &operatorv1alpha1.BalancerFallback{StartupTimeout: metav1.Duration{Duration: 5 * time.Second}}}
		})
		a0, a1, a2, a3 := domains.Slot(0, 0), domains.Slot(0, 1), domains.Slot(0, 2), domains.Slot(0, 3)
		b0, b1 := domains.Slot(1, 0), domains.Slot(1, 1)
		for _, o := range []int{a0, a1, b0, b1} {
			f.addPod(o)
		}
		f.addTargets(0, 20)
		Expect(loads(f.converged(20, 0))).To(Equal([]int{5, 5, 5, 5}))
		onLostZone := 0
		for _, pod := range f.statusPods() {
			if pod == f.podName(b0) || pod == f.podName(b1) {
				onLostZone++
			}
		}
		Expect(onLostZone).To(Equal(10))

		duplicates := f.watchForDuplicates()
		By("zone-b is lost: its pods are recreated and cannot be scheduled")
		lostAt := time.Now()
		for _, o := range []int{b0, b1} {
			f.removePod(o)
			f.addUnscheduledPod(o)
		}
		Eventually(func(g Gomega) {
			duplicates.sample()
			held := f.holdings()
			g.Expect(held).To(HaveLen(2))
			g.Expect(len(held[a0]) + len(held[a1])).To(Equal(20))
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed(), "zone-a's collectors hold every target")
		// A recreated pod's grace runs from its creation, which the API server records to the second.
		Expect(time.Since(lostAt)).To(BeNumerically(">=", time.Second), "targets waited for the grace period (2s, less up to 1s of timestamp truncation)")

		Eventually(func(g Gomega) {
			duplicates.sample()
			g.Expect(*f.domainStatefulSet("zone-a").Spec.Replicas).To(BeEquivalentTo(4))
		}, 15*time.Second, 100*time.Millisecond).Should(Succeed(), "zone-a runs zone-b's 2 replicas")
		Expect(time.Since(lostAt)).To(BeNumerically(">=", 4*time.Second), "replacements came after the startup timeout (5s, less up to 1s of timestamp truncation)")
		Expect(*f.domainStatefulSet("zone-b").Spec.Replicas).To(BeEquivalentTo(2), "zone-b keeps its share so that its pods start when they can")
		Eventually(func(g Gomega) { // the status is written at the end of the reconcile that scaled zone-a
			c := f.cluster()
			fallback := condition(c, operatorv1alpha1.ConditionDomainFallback)
			g.Expect(fallback.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(fallback.Reason).To(Equal(operatorv1alpha1.ReasonStartupTimeout))
			g.Expect(fallback.Message).To(ContainSubstring("zone-b (2 not started)"))
			g.Expect(c.Status.Domains).To(ContainElement(And(
				HaveField("Name", "zone-b"), HaveField("Blocked", true), HaveField("NotStarted", BeEquivalentTo(2)))))
			g.Expect(c.Status.Domains).To(ContainElement(And(HaveField("Name", "zone-a"), HaveField("Replacements", BeEquivalentTo(2)))))
		}, 5*time.Second, 100*time.Millisecond).Should(Succeed())

		By("zone-a's replacement pods start and take their share of the targets")
		f.addPod(a2)
		f.addPod(a3)
		Eventually(func(g Gomega) {
			duplicates.sample()
			g.Expect(loads(f.holdings())).To(Equal([]int{5, 5, 5, 5}))
		}, 15*time.Second, 100*time.Millisecond).Should(Succeed())

		By("zone-b returns: its pods start, the replacements go")
		f.startUnscheduledPod(b0)
		f.startUnscheduledPod(b1)
		Eventually(func(g Gomega) {
			duplicates.sample()
			g.Expect(*f.domainStatefulSet("zone-a").Spec.Replicas).To(BeEquivalentTo(2))
			g.Expect(condition(f.cluster(), operatorv1alpha1.ConditionDomainFallback).Reason).To(Equal(operatorv1alpha1.ReasonAllStarted))
		}, 15*time.Second, 100*time.Millisecond).Should(Succeed())
		f.removePod(a2) // as the StatefulSet controller scales zone-a down
		f.removePod(a3)
		Expect(loads(f.converged(20, 0))).To(Equal([]int{5, 5, 5, 5}))
		Expect(f.events(operatorv1alpha1.EventDomainFallbackEnded)).NotTo(BeEmpty())
		Expect(duplicates.seen).To(BeEmpty(), "no target was ever held by two collectors")
	})

	It("replaces the StatefulSet named after the Cluster by one per domain, and back when the domains go", func() {
		f := newFleet(2, nil, "")
		f.statefulSet()
		f.updateCluster(func(c *operatorv1alpha1.Cluster) {
			c.Spec.Domains = []operatorv1alpha1.ClusterDomain{{Name: "zone-a"}, {Name: "zone-b"}}
		})
		f.domains = []string{"zone-a", "zone-b"}
		Expect(*f.domainStatefulSet("zone-a").Spec.Replicas).To(BeEquivalentTo(1))
		Expect(*f.domainStatefulSet("zone-b").Spec.Replicas).To(BeEquivalentTo(1))
		Eventually(func() error { return k8sClient.Get(suiteCtx, f.key(), &appsv1.StatefulSet{}) }, 10*time.Second).
			Should(Satisfy(apierrors.IsNotFound))

		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.Domains = nil })
		Expect(*f.statefulSet().Spec.Replicas).To(BeEquivalentTo(2))
		for _, zone := range f.domains {
			Eventually(func() error {
				return k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-" + zone}, &appsv1.StatefulSet{})
			}, 10*time.Second).Should(Satisfy(apierrors.IsNotFound))
		}
		Eventually(func() []operatorv1alpha1.ClusterDomainStatus { return f.cluster().Status.Domains }, 10*time.Second).Should(BeEmpty())
	})

	It("says so when the StatefulSet a domain needs is another Cluster's, and leaves that StatefulSet alone", func() {
		f := newFleet(1, nil, "")
		other := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: f.name + "-zone-a", Namespace: f.ns},
			Spec: operatorv1alpha1.ClusterSpec{Image: "ghcr.io/openconfig/gnmic:test", Replicas: ptr.To(int32(3))}}
		Expect(k8sClient.Create(suiteCtx, other)).To(Succeed())
		DeferCleanup(func() { _ = k8sClient.Delete(suiteCtx, other) })
		taken := f.domainStatefulSet("zone-a") // Cluster fleet-zone-a's own StatefulSet
		Expect(metav1.GetControllerOf(taken).Name).To(Equal(other.Name))

		f.updateCluster(func(c *operatorv1alpha1.Cluster) {
			c.Spec.Domains = []operatorv1alpha1.ClusterDomain{{Name: "zone-a"}}
		})
		Consistently(func(g Gomega) {
			sts := f.domainStatefulSet("zone-a")
			g.Expect(metav1.GetControllerOf(sts).Name).To(Equal(other.Name))
			g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(3))
			g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(map[string]string{operatorv1alpha1.ClusterLabel: other.Name}))
		}, 5*time.Second, 250*time.Millisecond).Should(Succeed())
		Eventually(func() []string { return f.events(operatorv1alpha1.EventNameTaken) }, 10*time.Second).
			Should(ContainElement(ContainSubstring("StatefulSet " + other.Name + " (controlled by Cluster " + other.Name + ")")))
		owned := condition(f.cluster(), operatorv1alpha1.ConditionResourcesOwned)
		Expect(owned.Status).To(Equal(metav1.ConditionFalse))
		Expect(owned.Reason).To(Equal(operatorv1alpha1.ReasonNameTaken))
	})
})

// domainStatefulSet waits for the StatefulSet of the fleet's domain and returns it.
func (f *fleet) domainStatefulSet(domain string) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	Eventually(func() error {
		return k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-" + domain}, sts)
	}, 10*time.Second).Should(Succeed())
	return sts
}

// addUnscheduledPod creates the pod as a StatefulSet does in a lost zone: it exists, no node takes it, and no
// collector runs.
func (f *fleet) addUnscheduledPod(ordinal int) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: f.podName(ordinal), Namespace: f.ns, Labels: f.podLabels(ordinal)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "gnmic", Image: "ghcr.io/openconfig/gnmic:test"}}},
	}
	Eventually(func() error { return k8sClient.Create(suiteCtx, pod) }, 10*time.Second).Should(Succeed())
}

// startUnscheduledPod plays the scheduler and the kubelet once the pod's zone returns: its collector starts
// and the pod becomes ready.
func (f *fleet) startUnscheduledPod(ordinal int) {
	col := f.newCollector()
	Expect(col.Start(net.JoinHostPort(f.ip(ordinal), strconv.Itoa(f.port)))).To(Succeed())
	f.collectors[ordinal] = col
	f.setReady(ordinal, true)
}

// duplicateWatch records the targets seen on two of the fleet's collectors at once. The test samples it at
// every poll of its Eventually blocks (the fleet's collectors change only on the test's goroutine).
type duplicateWatch struct {
	f    *fleet
	seen map[string][]string
}

func (f *fleet) watchForDuplicates() *duplicateWatch {
	return &duplicateWatch{f: f, seen: map[string][]string{}}
}

// sample looks at what every collector holds now.
func (d *duplicateWatch) sample() {
	on := map[string][]string{}
	for o, c := range d.f.collectors {
		for _, t := range c.Targets() {
			on[t] = append(on[t], d.f.podName(o))
		}
	}
	for t, pods := range on {
		if len(pods) > 1 {
			d.seen[t] = pods
		}
	}
}
