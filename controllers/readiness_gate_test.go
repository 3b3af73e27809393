package controllers_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("Collector pod readiness gate", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	It("gives the collector pods a readiness gate on the configured condition", func() {
		f := newFleet(1, nil, "")
		Eventually(func(g Gomega) {
			var sts appsv1.StatefulSet
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name}, &sts)).To(Succeed())
			g.Expect(sts.Spec.Template.Spec.ReadinessGates).To(Equal([]corev1.PodReadinessGate{
				{ConditionType: "operator.gnmic.dev/configured"}}))
		}, 10*time.Second).Should(Succeed())
	})

	It("marks each pod configured once it holds its targets, and writes nothing more while nothing changes", func() {
		f := newFleet(2, nil, "")
		f.converged(0, 0)
		Eventually(func() corev1.ConditionStatus { return f.configured(0).Status }, 10*time.Second).Should(Equal(corev1.ConditionTrue))
		since := f.configured(0).LastTransitionTime
		Expect(since.IsZero()).To(BeFalse())
		// Transition times have a resolution of one second: let one pass, so that a new one would show.
		Consistently(func() corev1.ConditionStatus { return f.configured(0).Status }, 1100*time.Millisecond).
			Should(Equal(corev1.ConditionTrue))

		f.addTargets(0, 5)
		f.converged(5, 0)
		for o := range f.collectors {
			c := f.configured(o)
			Expect(c.Status).To(Equal(corev1.ConditionTrue), "pod %d", o)
			Expect(c.Reason).To(Equal("Applied"), "pod %d", o)
			Expect(c.Message).To(Equal("holds its configuration"), "pod %d", o)
		}
		Expect(f.configured(0).LastTransitionTime).To(Equal(since), "a configured pod that receives targets stays configured")
		Expect(f.pod(0).Status.Conditions).To(ContainElement(HaveField("Type", corev1.PodReady)), "the kubelet's conditions are kept")

		f.connected(5)
		Expect(op.writes.podStatusIn(f.ns)).To(Equal(int64(2)), "one write per pod, when it was first configured")
		// The Cluster's status catches up a reconcile after the Targets' (its ConfigApplied condition turns
		// True once the collectors' holdings are seen converged): count from when a second passes without a write.
		writes := int64(-1)
		Eventually(func() bool {
			n := op.writes.in(f.ns)
			settled := n == writes
			writes = n
			return settled
		}).WithPolling(time.Second).WithTimeout(15*time.Second).Should(BeTrue(), "the fleet settles")
		Consistently(func() int64 { return op.writes.in(f.ns) }, 5*time.Second, 250*time.Millisecond).Should(Equal(writes),
			"an unchanged fleet costs no write, through at least two collector polls")
	})

	It("marks a pod that refuses its configuration not configured, with the error, until it accepts it", func() {
		f := newFleet(2, nil, "")
		f.converged(0, 0)
		Eventually(func() corev1.ConditionStatus { return f.configured(1).Status }, 10*time.Second).Should(Equal(corev1.ConditionTrue))
		configuredSince := f.configured(1).LastTransitionTime
		// Transition times have a resolution of one second: let one pass, so that the next one shows.
		Consistently(func() corev1.ConditionStatus { return f.configured(1).Status }, 1100*time.Millisecond).
			Should(Equal(corev1.ConditionTrue))

		f.collectors[1].FailApply(http.StatusUnprocessableEntity, "output kafka: broker unreachable")
		f.addTargets(0, 6)
		Eventually(func(g Gomega) {
			c := f.configured(1)
			g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("PushFailed"))
			g.Expect(c.Message).To(ContainSubstring("output kafka: broker unreachable"))
			g.Expect(c.Message).To(ContainSubstring("push configuration to pod " + f.podName(1)))
			g.Expect(c.LastTransitionTime.Time).To(BeTemporally(">", configuredSince.Time))
			g.Expect(f.configured(0).Status).To(Equal(corev1.ConditionTrue), "the other pod is configured")
			g.Expect(f.collectors[0].Targets()).NotTo(BeEmpty())
		}, 20*time.Second).Should(Succeed())
		failedSince := f.configured(1).LastTransitionTime
		Consistently(func() corev1.ConditionStatus { return f.configured(1).Status }, 1100*time.Millisecond).
			Should(Equal(corev1.ConditionFalse), "retries that fail again keep the pod not configured")

		f.collectors[1].FailApply(http.StatusUnprocessableEntity, "output kafka: topic missing")
		f.addTargets(6, 1)
		Eventually(func(g Gomega) {
			c := f.configured(1)
			g.Expect(c.Message).To(ContainSubstring("output kafka: topic missing"))
			g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(c.LastTransitionTime).To(Equal(failedSince), "another error is no transition")
			collectors := f.cluster().Status.Collectors
			g.Expect(collectors).To(HaveLen(2))
			g.Expect(c.Message).To(Equal(collectors[1].Error), "the pod says what the Cluster status says")
		}, 20*time.Second).Should(Succeed())

		f.collectors[1].ClearApplyFailure()
		f.converged(7, 0)
		Eventually(func(g Gomega) {
			c := f.configured(1)
			g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
			g.Expect(c.Reason).To(Equal("Applied"))
			g.Expect(c.Message).To(Equal("holds its configuration"))
			g.Expect(c.LastTransitionTime.Time).To(BeTemporally(">", failedSince.Time))
		}, 30*time.Second).Should(Succeed())
	})

	It("pushes targets to a pod whose containers are ready while its gate keeps it unready, then opens the gate", func() {
		f := newFleet(2, nil, "")
		f.setGated(0)
		f.setGated(1)
		f.addTargets(0, 6)
		held := f.converged(6, 0)
		Expect(loads(held)).To(Equal([]int{3, 3}))
		Eventually(func(g Gomega) {
			for o := range f.collectors {
				g.Expect(f.configured(o).Status).To(Equal(corev1.ConditionTrue), "pod %d", o)
			}
		}, 10*time.Second).Should(Succeed())
		for o := range f.collectors {
			Expect(f.pod(o).Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodReady),
				HaveField("Status", corev1.ConditionFalse))), "the test plays the kubelet, which has not yet reported pod %d Ready", o)
		}
	})
})
