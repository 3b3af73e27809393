package controllers_test

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

var _ = Describe("Processors", func() {
	var op *operator
	// The collectors are read once an hour: only the watches of Processors, Outputs and Pipelines can bring a
	// change.
	BeforeEach(func() { op = startOperatorPolling(time.Hour) })
	AfterEach(func() { op.Stop() })

	It("sends each output its processors in order, counts them, and pushes a change only to the pods that use it, restarting no target", func() {
		f := newFleet(2, nil, "")
		late := map[string]string{"stage": "late"}
		f.addProcessor("a-tag", "event-add-tag", `{"add":{"dc":"dc1"}}`, nil)
		f.addProcessor("b-trim", "event-strings", `{"value-names":[".*"],"transforms":[{"trim-prefix":{"apply-on":"name","prefix":"/"}}]}`, nil)
		f.addProcessor("c-drop", "event-drop", `{"condition":".values == {}"}`, late)
		f.addProcessor("d-convert", "event-convert", `{"value-names":["counter"],"type":"int"}`, late)
		f.addProcessor("unused", "event-delete", `{"tag-names":["x"]}`, nil)
		f.setOutputProcessors("file", "b-trim")
		f.updatePipeline("all", func(p *operatorv1alpha1.Pipeline) {
			p.Spec.Outputs.ProcessorRefs = []string{"a-tag"}
			p.Spec.Outputs.ProcessorSelectors = []metav1.LabelSelector{{MatchLabels: late}}
		})
		// Another Cluster of the namespace sends the same Output without the Pipeline's processors.
		other := newSiblingFleet(f, "other", 1)
		f.addTargets(0, 4)
		f.converged(4, 0)
		other.converged(0, 0)

		chain := []string{"b-trim", "a-tag", "c-drop", "d-convert"}
		Eventually(func(g Gomega) {
			for o, col := range f.collectors {
				last, ok := col.LastApplied()
				g.Expect(ok).To(BeTrue())
				g.Expect(last.Config.EventProcessors("outputs", "file")).To(Equal(chain), "pod %d", o)
				g.Expect(slices.Sorted(maps.Keys(last.Config.Processors))).To(Equal([]string{"a-tag", "b-trim", "c-drop", "d-convert"}),
					"pod %d gets exactly the processors its outputs apply", o)
				g.Expect(last.Config.ProcessorType("d-convert")).To(Equal("event-convert"))
				g.Expect(last.Config.InitError("outputs", "file")).To(Succeed(), "pod %d", o)
			}
			last, _ := other.collectors[0].LastApplied()
			g.Expect(last.Config.EventProcessors("outputs", "file")).To(Equal([]string{"b-trim"}))
			g.Expect(slices.Sorted(maps.Keys(last.Config.Processors))).To(Equal([]string{"b-trim"}))

			g.Expect(f.cluster().Status.ProcessorsCount).To(BeEquivalentTo(4))
			g.Expect(other.cluster().Status.ProcessorsCount).To(BeEquivalentTo(1))
			g.Expect(f.pipeline(g, "all").Status.ProcessorsCount).To(BeEquivalentTo(4))
			tag := f.processor(g, "a-tag")
			g.Expect(tag.Status.UsedBy).To(Equal([]operatorv1alpha1.ProcessorUse{{Cluster: f.name, Outputs: []string{"file"}}}))
			g.Expect(meta.IsStatusConditionTrue(tag.Status.Conditions, operatorv1alpha1.ConditionInUse)).To(BeTrue())
			g.Expect(f.processor(g, "b-trim").Status.UsedBy).To(HaveLen(2), "both Clusters apply b-trim")
			unused := meta.FindStatusCondition(f.processor(g, "unused").Status.Conditions, operatorv1alpha1.ConditionInUse)
			g.Expect(unused).NotTo(BeNil())
			g.Expect(unused.Status).To(Equal(metav1.ConditionFalse))
		}, 20*time.Second).Should(Succeed())

		By("changing a processor only the first Cluster applies")
		countsBefore := map[string]fakecollector.TargetCounts{}
		for _, col := range f.collectors {
			for _, name := range col.Targets() {
				countsBefore[name] = col.Counts(name)
			}
		}
		Expect(countsBefore).To(HaveLen(4))
		otherApplies := other.collectors[0].ApplyCount()
		f.setProcessorConfig("c-drop", `{"condition":".values == null"}`)
		Eventually(func(g Gomega) {
			for o, col := range f.collectors {
				last, _ := col.LastApplied()
				g.Expect(last.Config.Processors["c-drop"]).To(HaveKeyWithValue("event-drop",
					HaveKeyWithValue("condition", ".values == null")), "pod %d", o)
				g.Expect(last.Changes.Processors.Changed).To(Equal([]string{"c-drop"}), "pod %d", o)
				g.Expect(last.Changes.Targets.Empty()).To(BeTrue(), "pod %d: the apply changes no target", o)
				g.Expect(last.Changes.Outputs.Empty()).To(BeTrue(), "pod %d", o)
			}
		}, 20*time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(other.collectors[0].ApplyCount()).To(Equal(otherApplies), "the other Cluster's pod gets no push")
			for _, col := range f.collectors {
				for _, name := range col.Targets() {
					g.Expect(col.Counts(name)).To(Equal(countsBefore[name]), "target %s is not restarted", name)
				}
			}
		}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
		f.converged(4, 0)
	})

	It("sends no output whose processor is missing, with the targets that send to it, says which, and sends it once the processor exists", func() {
		f := newFleet(1, nil, "")
		f.addProcessor("a-tag", "event-add-tag", `{"add":{"dc":"dc1"}}`, nil)
		f.setOutputProcessors("file", "a-tag", "gone")
		f.addTargets(0, 2)
		Eventually(func(g Gomega) {
			last, ok := f.collectors[0].LastApplied()
			g.Expect(ok).To(BeTrue())
			g.Expect(last.Config.Outputs).NotTo(HaveKey("file"), "no output with a dangling processor")
			g.Expect(last.Config.Processors).To(BeEmpty(), "no processor of an output that is not sent")
			g.Expect(last.Config.Targets).To(BeEmpty(), "the targets that send to the output wait with it")
			cond := meta.FindStatusCondition(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionProcessorsResolved)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonProcessorNotFound))
			g.Expect(cond.Message).To(ContainSubstring(`processor "gone"`))
			g.Expect(f.events(operatorv1alpha1.EventTargetsSkipped)).To(ContainElement(ContainSubstring(`output "file": processor "gone": processor not found`)))
			g.Expect(f.cluster().Status.SkippedTargets).To(BeEquivalentTo(2))
		}, 20*time.Second).Should(Succeed())

		By("creating the missing processor")
		f.addProcessor("gone", "event-delete", `{"value-names":["debug"]}`, nil)
		f.converged(2, 0)
		Eventually(func(g Gomega) {
			last, _ := f.collectors[0].LastApplied()
			g.Expect(last.Config.EventProcessors("outputs", "file")).To(Equal([]string{"a-tag", "gone"}))
			g.Expect(meta.IsStatusConditionTrue(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionProcessorsResolved)).To(BeTrue())
		}, 20*time.Second).Should(Succeed())

		By("a Pipeline naming a missing processor")
		f.updatePipeline("all", func(p *operatorv1alpha1.Pipeline) { p.Spec.Outputs.ProcessorRefs = []string{"missing-too"} })
		Eventually(func(g Gomega) {
			last, _ := f.collectors[0].LastApplied()
			g.Expect(last.Config.Outputs).NotTo(HaveKey("file"))
			ready := meta.FindStatusCondition(f.pipeline(g, "all").Status.Conditions, operatorv1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Message).To(ContainSubstring(`outputs.processorRef "missing-too" not found`))
			g.Expect(meta.IsStatusConditionTrue(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionProcessorsResolved)).
				To(BeTrue(), "the Output's own list resolves; the Pipeline's reference is the Pipeline's problem")
		}, 20*time.Second).Should(Succeed())
		f.updatePipeline("all", func(p *operatorv1alpha1.Pipeline) { p.Spec.Outputs.ProcessorRefs = nil })
		f.converged(2, 0)
	})

	It("refuses processor types the collector does not have", func() {
		ns := newFleet(0, nil, "").ns
		refused := map[string]operatorv1alpha1.ProcessorSpec{
			"an unknown type":                 {Type: "event-frobnicate"},
			"event-plugin, which needs files": {Type: "event-plugin"},
			"no type":                         {Config: rawConfig(`{"value-names":[".*"]}`)},
			"the public operator's spelling":  {Type: "event-ieee-float32"},
		}
		for what, spec := range refused {
			p := &operatorv1alpha1.Processor{ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Namespace: ns}, Spec: spec}
			Expect(k8sClient.Create(suiteCtx, p)).NotTo(Succeed(), what)
		}
		accepted := []operatorv1alpha1.ProcessorSpec{
			{Type: "event-convert", Config: rawConfig(`{"value-names":["x"],"type":"int"}`)},
			{Type: "event-starlark", Config: rawConfig(`{"source":"def apply(*events): return events"}`)},
			{Type: "event-merge"},
			{Type: "event-value-tag-v2", Config: rawConfig(`{"value-name":"x"}`)},
		}
		for _, spec := range accepted {
			p := &operatorv1alpha1.Processor{ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Namespace: ns}, Spec: spec}
			Expect(k8sClient.Create(suiteCtx, p)).To(Succeed(), spec.Type)
		}
		o := &operatorv1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Name: "twice", Namespace: ns},
			Spec: operatorv1alpha1.OutputSpec{Type: "file", EventProcessors: []string{"x", "x"}}}
		Expect(k8sClient.Create(suiteCtx, o)).NotTo(Succeed(), "a processor twice in one list")
	})
})

// addProcessor creates a Processor of the fleet's namespace.
func (f *fleet) addProcessor(name, typ, config string, labels map[string]string) {
	Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Processor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels},
		Spec: operatorv1alpha1.ProcessorSpec{Type: typ, Config: rawConfig(config)}})).To(Succeed())
}

func (f *fleet) setProcessorConfig(name, config string) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var p operatorv1alpha1.Processor
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &p); err != nil {
			return err
		}
		p.Spec.Config = rawConfig(config)
		return k8sClient.Update(suiteCtx, &p)
	})).To(Succeed())
}

func (f *fleet) setOutputProcessors(output string, names ...string) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var o operatorv1alpha1.Output
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: output}, &o); err != nil {
			return err
		}
		o.Spec.EventProcessors = names
		return k8sClient.Update(suiteCtx, &o)
	})).To(Succeed())
}

func (f *fleet) updatePipeline(name string, change func(*operatorv1alpha1.Pipeline)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := f.pipeline(Default, name)
		change(p)
		return k8sClient.Update(suiteCtx, p)
	})).To(Succeed())
}

func (f *fleet) processor(g Gomega, name string) *operatorv1alpha1.Processor {
	var p operatorv1alpha1.Processor
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &p)).To(Succeed())
	return &p
}

// newSiblingFleet is a second Cluster, called name, in of's namespace, with replicas pods and a Pipeline
// ("all-<name>") that selects no target and sends to of's Output "file".
func newSiblingFleet(of *fleet, name string, replicas int) *fleet {
	f := &fleet{subnet: int(fleetSeq.Add(1)), collectors: map[int]*fakecollector.Collector{}, ns: of.ns, name: name,
		image: gnmic.DefaultImage}
	f.port = freePort(f.ip(0))
	c := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: f.ns}}
	c.Spec.Image = f.image
	c.Spec.Replicas = ptr.To(int32(replicas))
	c.Spec.API.RestPort = int32(f.port)
	Expect(k8sClient.Create(suiteCtx, c)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "all-" + name, Namespace: f.ns},
		Spec: operatorv1alpha1.PipelineSpec{ClusterRef: name, Outputs: &operatorv1alpha1.OutputSelection{OutputRefs: []string{"file"}}}})).To(Succeed())
	for o := 0; o < replicas; o++ {
		f.addPod(o)
	}
	DeferCleanup(f.close)
	return f
}

// rawConfig splits a JSON object into a spec.config; "" is none.
func rawConfig(s string) map[string]apiextensionsv1.JSON {
	if s == "" {
		return nil
	}
	var fields map[string]json.RawMessage
	Expect(json.Unmarshal([]byte(s), &fields)).To(Succeed())
	out := make(map[string]apiextensionsv1.JSON, len(fields))
	for k, v := range fields {
		out[k] = apiextensionsv1.JSON{Raw: v}
	}
	return out
}
