package controllers_test

import (
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/fleetmetrics"
)

// The real collector answers 200 to a configuration whose output it cannot start, stores it, keeps its
// targets running with the output listed, and sends nothing to it: only its output state stream says so.
var _ = Describe("Cluster reconciler, when collectors accept an Output they cannot start", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	const protoReason = "proto format not supported in output type 'file'"

	It("names the Output's failed pods and reason on the Output and the Cluster, warns, counts it per pod, and clears it once the Output starts", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 6)
		held := f.converged(6, 0)
		Eventually(func(g Gomega) {
			g.Expect(condition(f.cluster(), operatorv1alpha1.ConditionOutputsRunning).Status).To(Equal(metav1.ConditionTrue))
			running := meta.FindStatusCondition(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionRunning)
			g.Expect(running).NotTo(BeNil())
			g.Expect(running.Status).To(Equal(metav1.ConditionTrue))
		}, 15*time.Second).Should(Succeed())

		f.setOutputConfig(map[string]string{"filename": "/telemetry/out", "format": "proto"})
		Eventually(func(g Gomega) {
			o := f.output(g, "file")
			running := meta.FindStatusCondition(o.Status.Conditions, operatorv1alpha1.ConditionRunning)
			g.Expect(running).NotTo(BeNil())
			g.Expect(running.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(running.Reason).To(Equal(operatorv1alpha1.ReasonFailedOnCollectors))
			g.Expect(running.Message).To(ContainSubstring(protoReason))
			g.Expect(running.Message).To(ContainSubstring("Cluster " + f.name))
			g.Expect(o.Status.FailedOn).To(Equal([]operatorv1alpha1.ComponentFailure{{Cluster: f.name,
				Pods: []string{f.podName(0), f.podName(1)}, PodCount: 2, Reason: protoReason}}))
			// The collectors took it: it is no refusal.
			g.Expect(meta.IsStatusConditionTrue(o.Status.Conditions, operatorv1alpha1.ConditionAccepted)).To(BeTrue())

			c := f.cluster()
			cond := condition(c, operatorv1alpha1.ConditionOutputsRunning)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonOutputsFailed))
			g.Expect(cond.Message).To(ContainSubstring("Output file failed to start on pod(s) " + f.podName(0) + ", " + f.podName(1)))
			g.Expect(cond.Message).To(ContainSubstring(protoReason))
			g.Expect(condition(c, operatorv1alpha1.ConditionConfigApplied).Status).To(Equal(metav1.ConditionTrue))
			for o := range f.collectors {
				g.Expect(testutil.ToFloat64(fleetmetrics.FailedOutputs.WithLabelValues(f.ns, f.name, f.podName(o)))).To(Equal(1.0))
			}
		}, 15*time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(f.events(operatorv1alpha1.EventOutputFailed)).To(ContainElement(And(
				ContainSubstring("Output file failed to start on pod(s)"), ContainSubstring(protoReason))))
			g.Expect(f.eventsOf("Output", "file", operatorv1alpha1.EventOutputFailed)).To(ContainElement(And(
				ContainSubstring("Cluster "+f.name), ContainSubstring(protoReason))))
		}, 10*time.Second).Should(Succeed())
		GinkgoWriter.Printf("OutputsRunning: %s\nOutput Running: %s\n",
			condition(f.cluster(), operatorv1alpha1.ConditionOutputsRunning).Message,
			meta.FindStatusCondition(f.output(Default, "file").Status.Conditions, operatorv1alpha1.ConditionRunning).Message)

		// Pods stay Ready and the targets stay where they are: a failed output is no reason to move them.
		Consistently(func(g Gomega) {
			g.Expect(f.holdings()).To(Equal(held))
			for o := range f.collectors {
				g.Expect(f.configured(o).Status).To(Equal(corev1.ConditionTrue), "pod %d", o)
			}
		}, 2*time.Second, 100*time.Millisecond).Should(Succeed())
		warned := len(f.events(operatorv1alpha1.EventOutputFailed))

		f.setOutputConfig(map[string]string{"filename": "/telemetry/out", "format": "json"})
		Eventually(func(g Gomega) {
			o := f.output(g, "file")
			g.Expect(o.Status.FailedOn).To(BeEmpty())
			g.Expect(meta.IsStatusConditionTrue(o.Status.Conditions, operatorv1alpha1.ConditionRunning)).To(BeTrue())
			g.Expect(condition(f.cluster(), operatorv1alpha1.ConditionOutputsRunning).Status).To(Equal(metav1.ConditionTrue))
			for o := range f.collectors {
				g.Expect(testutil.ToFloat64(fleetmetrics.FailedOutputs.WithLabelValues(f.ns, f.name, f.podName(o)))).To(BeZero())
			}
			g.Expect(f.events(operatorv1alpha1.EventOutputsRunning)).NotTo(BeEmpty())
		}, 15*time.Second).Should(Succeed())
		Expect(f.events(operatorv1alpha1.EventOutputFailed)).To(HaveLen(warned), "a failure was announced more than once")
		Expect(f.holdings()).To(Equal(held))
	})

	It("reports the one pod whose collector cannot start the Output, and forgets the failure when that pod's collector restarts without it", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 4)
		f.converged(4, 0)
		const reason = "open /telemetry/out.json: read-only file system"
		f.collectors[1].FailOutputSetting("filename", "/telemetry/out.json", reason)
		f.setOutputFile("/telemetry/out.json")
		Eventually(func(g Gomega) {
			o := f.output(g, "file")
			g.Expect(o.Status.FailedOn).To(Equal([]operatorv1alpha1.ComponentFailure{{Cluster: f.name,
				Pods: []string{f.podName(1)}, PodCount: 1, Reason: reason}}))
			g.Expect(testutil.ToFloat64(fleetmetrics.FailedOutputs.WithLabelValues(f.ns, f.name, f.podName(0)))).To(BeZero())
			g.Expect(testutil.ToFloat64(fleetmetrics.FailedOutputs.WithLabelValues(f.ns, f.name, f.podName(1)))).To(Equal(1.0))
		}, 15*time.Second).Should(Succeed())

		// A new collector process on pod 1 (its container restarted) gets its configuration again and starts
		// the Output this time.
		f.restartContainer(1)
		Eventually(func(g Gomega) {
			o := f.output(g, "file")
			g.Expect(o.Status.FailedOn).To(BeEmpty())
			g.Expect(meta.IsStatusConditionTrue(o.Status.Conditions, operatorv1alpha1.ConditionRunning)).To(BeTrue())
			g.Expect(condition(f.cluster(), operatorv1alpha1.ConditionOutputsRunning).Status).To(Equal(metav1.ConditionTrue))
		}, 30*time.Second).Should(Succeed())
	})

	It("puts the failure of an Output on the Processor whose initialisation failed it, and clears both when the Output no longer applies it", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 4)
		f.converged(4, 0)
		const reason = "jq: error: unexpected end of input"
		for _, col := range f.collectors {
			col.FailProcessorSetting("expression", ".bad[", reason)
		}
		f.addProcessor("jq", "event-jq", `{"expression": ".bad["}`, nil)
		f.setOutputProcessors("file", "jq")
		want := "failed initializing event processor 'jq' of type='event-jq': " + reason
		Eventually(func(g Gomega) {
			o := f.output(g, "file")
			g.Expect(o.Status.FailedOn).To(Equal([]operatorv1alpha1.ComponentFailure{{Cluster: f.name,
				Pods: []string{f.podName(0), f.podName(1)}, PodCount: 2, Reason: want}}))
			p := f.processor(g, "jq")
			g.Expect(p.Status.FailedOn).To(Equal([]operatorv1alpha1.ComponentFailure{{Cluster: f.name,
				Pods: []string{f.podName(0), f.podName(1)}, PodCount: 2, Reason: "Output file: " + want}}))
			running := meta.FindStatusCondition(p.Status.Conditions, operatorv1alpha1.ConditionRunning)
			g.Expect(running).NotTo(BeNil())
			g.Expect(running.Status).To(Equal(metav1.ConditionFalse))
		}, 15*time.Second).Should(Succeed())

		f.setOutputProcessors("file")
		Eventually(func(g Gomega) {
			g.Expect(f.output(g, "file").Status.FailedOn).To(BeEmpty())
			p := f.processor(g, "jq")
			g.Expect(p.Status.FailedOn).To(BeEmpty())
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, operatorv1alpha1.ConditionRunning)).To(BeTrue())
		}, 15*time.Second).Should(Succeed())
	})
})

// setOutputConfig replaces the config of the fleet's Output with string values.
func (f *fleet) setOutputConfig(values map[string]string) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var o operatorv1alpha1.Output
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "file"}, &o); err != nil {
			return err
		}
		o.Spec.Config = map[string]apiextensionsv1.JSON{}
		for k, v := range values {
			o.Spec.Config[k] = apiextensionsv1.JSON{Raw: []byte(strconv.Quote(v))}
		}
		return k8sClient.Update(suiteCtx, &o)
	})).To(Succeed())
}

// eventsOf are the messages of the events with the reason recorded on one object of the fleet's namespace.
func (f *fleet) eventsOf(kind, name, reason string) []string {
	var list corev1.EventList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Reason == reason && e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e.Message)
		}
	}
	return out
}
