package controllers_test

import (
	"net"
	"net/http"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

var _ = Describe("Cluster reconciler, when a pod or every pod refuses its configuration", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	It("hands the targets of a pod that refuses its own configuration past the grace period to the other pod, and gives it targets again once it accepts", func() {
		f := newFleet(1, nil, "3s")
		f.addTargets(0, 10)
		f.converged(10, 0)

		// A new pod whose collector refuses everything it is sent, for reasons of its own: pod 0 takes the
		// same outputs.
		f.scale(2)
		refusal := "validate error: open /var/lib/gnmic/cache: read-only file system"
		refusedFrom := time.Now()
		f.addPodWith(1, func(c *fakecollector.Collector) { c.FailApply(http.StatusBadRequest, refusal) })
		overlaps := sampleOverlaps(20*time.Millisecond, f.collectors[0], f.collectors[1])

		Eventually(func(g Gomega) {
			g.Expect(f.configured(1).Status).To(Equal(corev1.ConditionFalse))
			g.Expect(f.configured(1).Reason).To(Equal(operatorv1alpha1.ReasonPodConfigPushFailed))
		}, 15*time.Second).Should(Succeed())

		// After the grace period every target is collected by pod 0, and the refusing pod holds none.
		Eventually(func(g Gomega) {
			g.Expect(f.collectors[0].Targets()).To(HaveLen(10))
			g.Expect(f.collectors[1].Targets()).To(BeEmpty())
			for name, pod := range f.statusPods() {
				g.Expect(pod).To(Equal(f.podName(0)), "target %s", name)
			}
		}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
		took := time.Since(refusedFrom)
		GinkgoWriter.Printf("all targets collected by pod 0 %v after pod 1 began refusing (grace 3s)\n", took)
		Expect(took).To(BeNumerically(">=", 2500*time.Millisecond), "the grace period was not kept")

		Eventually(func(g Gomega) {
			events := f.events(operatorv1alpha1.EventRefusingPodEmptied)
			g.Expect(events).NotTo(BeEmpty())
			g.Expect(events[0]).To(ContainSubstring(f.podName(1)))
			g.Expect(events[0]).To(ContainSubstring(refusal))
			gate := f.configured(1)
			g.Expect(gate.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(gate.Message).To(ContainSubstring("its targets moved to other pods"))
			g.Expect(gate.Message).To(ContainSubstring(refusal))
			c := f.cluster()
			applied := condition(c, operatorv1alpha1.ConditionConfigApplied)
			g.Expect(applied.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(applied.Message).To(ContainSubstring("pod(s) " + f.podName(1) + " refused it for longer than the grace period"))
			g.Expect(c.Status.Collectors).To(HaveLen(2))
			g.Expect(c.Status.Collectors[1].Error).To(Equal(gate.Message), "the Cluster says what the pod says")
			g.Expect(c.Status.UnassignedTargets).To(BeZero())
		}, 10*time.Second).Should(Succeed())
		GinkgoWriter.Printf("event: %s\ngate: %s\nConfigApplied: %s\n", f.events(operatorv1alpha1.EventRefusingPodEmptied)[0],
			f.configured(1).Message, condition(f.cluster(), operatorv1alpha1.ConditionConfigApplied).Message)
		Consistently(func() []string { return f.collectors[1].Targets() }, 2*time.Second, 100*time.Millisecond).
			Should(BeEmpty(), "targets went back to a pod that still refuses")

		// The pod accepts again: it is an ordinary pod, and placement gives it its share.
		f.collectors[1].ClearApplyFailure()
		accepting := time.Now()
		Eventually(func() []int { return loads(f.holdings()) }, 30*time.Second, 50*time.Millisecond).Should(Equal([]int{5, 5}))
		GinkgoWriter.Printf("pod 1 holds its share %v after its collector accepts again\n", time.Since(accepting))
		Expect(loads(f.converged(10, 0))).To(Equal([]int{5, 5}))
		Eventually(func() corev1.ConditionStatus { return f.configured(1).Status }, 15*time.Second).Should(Equal(corev1.ConditionTrue))
		Expect(overlaps.stop()).To(BeEmpty(), "a target ran on both collectors")
	})

	It("moves nothing when every pod refuses a bad Output, and says on the Output and the Pipeline which one and why, until it is fixed", func() {
		f := newFleet(2, nil, "1s")
		f.addTargets(0, 6)
		held := f.converged(6, 0)
		// Collectors hold their targets (converged) a moment before the operator reads that back and turns the
		// readiness gates True; a pod refusing before its gate was ever True stays unready, which is right, and
		// not what this spec is about.
		Eventually(func(g Gomega) {
			for o := range f.collectors {
				g.Expect(f.configured(o).Status).To(Equal(corev1.ConditionTrue), "pod %d", o)
			}
		}, 15*time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			accepted := meta.FindStatusCondition(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionAccepted)
			g.Expect(accepted).NotTo(BeNil())
			g.Expect(accepted.Status).To(Equal(metav1.ConditionTrue))
			configured := meta.FindStatusCondition(f.pipeline(g, "all").Status.Conditions, operatorv1alpha1.ConditionConfigurationAccepted)
			g.Expect(configured).NotTo(BeNil())
			g.Expect(configured.Status).To(Equal(metav1.ConditionTrue))
		}, 10*time.Second).Should(Succeed())
		unassigned := f.cluster().Status.UnassignedTargets

		// The collector at the commit the operator is built against answers 200 to any output it can decode
		// and fails it later (output_health_test.go); a collector that validates outputs on apply (as its
		// POST /api/v1/config/outputs does) would refuse the whole apply, and that is what this plays.
		const fault = `output "file": unknown format "csv"`
		for _, col := range f.collectors {
			col.FailApply(http.StatusBadRequest, "validate error: "+fault)
		}
		f.setOutputFile("/telemetry/out.csv")
		Eventually(func(g Gomega) {
			o := f.output(g, "file")
			accepted := meta.FindStatusCondition(o.Status.Conditions, operatorv1alpha1.ConditionAccepted)
			g.Expect(accepted).NotTo(BeNil())
			g.Expect(accepted.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(accepted.Reason).To(Equal(operatorv1alpha1.ReasonRejectedByCollectors))
			g.Expect(accepted.Message).To(ContainSubstring(fault))
			g.Expect(accepted.Message).To(ContainSubstring("Cluster " + f.name))
			g.Expect(o.Status.RejectedBy).To(ConsistOf(HaveField("Cluster", f.name)))
			g.Expect(o.Status.ObservedGeneration).To(Equal(o.Generation))
			configured := meta.FindStatusCondition(f.pipeline(g, "all").Status.Conditions, operatorv1alpha1.ConditionConfigurationAccepted)
			g.Expect(configured).NotTo(BeNil())
			g.Expect(configured.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(configured.Reason).To(Equal(operatorv1alpha1.ReasonConfigurationRejected))
			g.Expect(configured.Message).To(ContainSubstring("Output file"))
			g.Expect(configured.Message).To(ContainSubstring("Cluster " + f.name))
		}, 15*time.Second).Should(Succeed())

		GinkgoWriter.Printf("Output: %s\nPipeline: %s\n",
			meta.FindStatusCondition(f.output(Default, "file").Status.Conditions, operatorv1alpha1.ConditionAccepted).Message,
			meta.FindStatusCondition(f.pipeline(Default, "all").Status.Conditions, operatorv1alpha1.ConditionConfigurationAccepted).Message)
		// Longer than the grace period: a configuration every pod refuses moves nothing, makes no pod unready,
		// asks the autoscaler for nothing, and costs no status write per retry.
		outputVersion, pipelineVersion := f.output(Default, "file").ResourceVersion, f.pipeline(Default, "all").ResourceVersion
		Consistently(func(g Gomega) {
			g.Expect(f.holdings()).To(Equal(held))
			for o := range f.collectors {
				g.Expect(f.configured(o).Status).To(Equal(corev1.ConditionTrue), "pod %d", o)
			}
			g.Expect(f.cluster().Status.UnassignedTargets).To(Equal(unassigned))
			g.Expect(f.output(g, "file").ResourceVersion).To(Equal(outputVersion))
			g.Expect(f.pipeline(g, "all").ResourceVersion).To(Equal(pipelineVersion))
		}, 3*time.Second, 100*time.Millisecond).Should(Succeed())
		Expect(f.events(operatorv1alpha1.EventRefusingPodEmptied)).To(BeEmpty())
		Expect(f.events(operatorv1alpha1.EventTargetsMoved)).To(BeEmpty())

		for _, col := range f.collectors {
			col.ClearApplyFailure()
		}
		f.setOutputFile("/telemetry/out.json")
		Eventually(func(g Gomega) {
			o := f.output(g, "file")
			accepted := meta.FindStatusCondition(o.Status.Conditions, operatorv1alpha1.ConditionAccepted)
			g.Expect(accepted).NotTo(BeNil())
			g.Expect(accepted.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(o.Status.RejectedBy).To(BeEmpty())
			configured := meta.FindStatusCondition(f.pipeline(g, "all").Status.Conditions, operatorv1alpha1.ConditionConfigurationAccepted)
			g.Expect(configured).NotTo(BeNil())
			g.Expect(configured.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(f.cluster(), operatorv1alpha1.ConditionConfigApplied).Status).To(Equal(metav1.ConditionTrue))
			for _, col := range f.collectors {
				last, ok := col.LastApplied()
				g.Expect(ok).To(BeTrue())
				g.Expect(last.Config.Outputs["file"]).To(HaveKeyWithValue("filename", "/telemetry/out.json"))
			}
		}, 30*time.Second).Should(Succeed())
		Expect(f.holdings()).To(Equal(held))
	})
})

// addPodWith is addPod with the pod's collector prepared by prepare before it answers anything.
func (f *fleet) addPodWith(ordinal int, prepare func(*fakecollector.Collector)) {
	col := f.newCollector()
	prepare(col)
	Expect(col.Start(net.JoinHostPort(f.ip(ordinal), strconv.Itoa(f.port)))).To(Succeed())
	f.collectors[ordinal] = col
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: f.podName(ordinal), Namespace: f.ns,
			Labels: map[string]string{operatorv1alpha1.ClusterLabel: f.name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gnmic", Image: "ghcr.io/openconfig/gnmic:test"}}},
	}
	Expect(k8sClient.Create(suiteCtx, pod)).To(Succeed())
	f.setReady(ordinal, true)
}

// setOutputFile changes the file name of the fleet's Output, so that every pod gets a new configuration.
func (f *fleet) setOutputFile(filename string) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var o operatorv1alpha1.Output
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "file"}, &o); err != nil {
			return err
		}
		o.Spec.Config = map[string]apiextensionsv1.JSON{"filename": {Raw: []byte(strconv.Quote(filename))}}
		return k8sClient.Update(suiteCtx, &o)
	})).To(Succeed())
}

func (f *fleet) output(g Gomega, name string) *operatorv1alpha1.Output {
	var o operatorv1alpha1.Output
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &o)).To(Succeed())
	return &o
}

func (f *fleet) pipeline(g Gomega, name string) *operatorv1alpha1.Pipeline {
	var p operatorv1alpha1.Pipeline
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &p)).To(Succeed())
	return &p
}
