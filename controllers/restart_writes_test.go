package controllers_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"k8s.io/client-go/util/retry"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// An operator restart (an upgrade, a leader failover) over a converged Cluster finds every status already
// right: it writes nothing, pushes nothing and restarts no target. "Writes" are every API write the operator
// makes in the fleet's namespace: Target, Cluster and Pipeline status, pod status (readiness gates), the
// owned objects (StatefulSet, Services, Secrets, ...), and the Events it records.
var _ = Describe("Status writes", func() {
	const targets = 300

	It("are none after an operator restart over a converged Cluster, with no push, no target start and no event", func() {
		f := newFleetOf(3)
		f.addEdgePipeline(20)
		createTargetsConcurrently(f, targets)
		op := startOperator()
		f.convergedCollecting(targets)
		f.quiet(op, 3*time.Second)
		op.Stop()

		applies, starts := f.appliesAndStarts(targets)
		events := f.recordedEvents()
		before := clusterReconciles()
		began := time.Now()
		op = startOperator()
		DeferCleanup(func() { op.Stop() })
		Eventually(func() float64 { return clusterReconciles().succeeded }).WithTimeout(time.Minute).
			WithPolling(50 * time.Millisecond).Should(BeNumerically(">", before.succeeded))
		firstPass := time.Since(began)
		// The first reconcile and those of the next polls (every 2 s) find everything as it was.
		Consistently(func(g Gomega) {
			g.Expect(op.writes.madeIn(f.ns)).To(BeEmpty(), "the restarted operator's writes")
		}).WithTimeout(5 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		Expect(clusterReconciles().succeeded-before.succeeded).To(BeNumerically(">=", 2), "reconciles after the restart")
		appliesAfter, startsAfter := f.appliesAndStarts(targets)
		Expect(appliesAfter-applies).To(BeZero(), "configuration pushes after the restart")
		Expect(startsAfter-starts).To(BeZero(), "target starts after the restart")
		Expect(f.recordedEvents()).To(Equal(events), "events recorded after the restart")
		GinkgoWriter.Printf("restart over %d converged targets on 3 pods: first reconcile done %.2f s after start; "+
			"%.0f reconciles in the next 5 s; %d writes, %d pushes, %d target starts\n", targets, firstPass.Seconds(),
			clusterReconciles().succeeded-before.succeeded, len(op.writes.madeIn(f.ns)), appliesAfter-applies, startsAfter-starts)
	})

	It("are none after an operator restart over a converged Cluster that weighs its targets by their measured rates", func() {
		const window, poll = 4 * time.Second, time.Second
		f := newFleetWith(2, func(c *operatorv1alpha1.Cluster) {
			c.Spec.TargetDistribution.WeighBy = operatorv1alpha1.WeighByMeasured
			c.Spec.TargetDistribution.MeasuredWeights = &operatorv1alpha1.MeasuredWeights{
				Window: &metav1.Duration{Duration: window}, Hysteresis: &metav1.Duration{Duration: 2 * time.Second}, MaxWeight: 64}
		})
		rates := map[string]float64{targetName(0): 80}
		for i := 1; i < 10; i++ {
			rates[targetName(i)] = 10
		}
		f.setResponseRates(rates)
		f.addTargets(0, 10)
		op := startOperatorPolling(poll)
		f.convergedCollecting(10)
		Eventually(func(g Gomega) {
			for name, st := range f.clusterStates() {
				g.Expect(st.ResponseRate).NotTo(BeEmpty(), "target %s", name)
				g.Expect(st.WeightSource).To(Equal(operatorv1alpha1.WeightSourceMeasured), "target %s", name)
			}
			g.Expect(f.clusterStates()[targetName(0)].Weight).To(BeEquivalentTo(8))
		}).WithTimeout(30 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		// The rates the statuses show settle once the window holds only steady samples.
		f.quiet(op, 2*window)
		op.Stop()

		applies, starts := f.appliesAndStarts(10)
		op = startOperatorPolling(poll)
		DeferCleanup(func() { op.Stop() })
		// Past the window: the restarted operator measured every rate again.
		Consistently(func(g Gomega) {
			g.Expect(op.writes.madeIn(f.ns)).To(BeEmpty(), "the restarted operator's writes")
		}).WithTimeout(2 * window).WithPolling(100 * time.Millisecond).Should(Succeed())
		appliesAfter, startsAfter := f.appliesAndStarts(10)
		Expect(appliesAfter - applies).To(BeZero())
		Expect(startsAfter - starts).To(BeZero())
	})

	It("are none after an operator restart over a Cluster whose collectors cannot start an Output, and it is not announced again", func() {
		f := newFleetOf(2)
		f.addTargets(0, 6)
		op := startOperator()
		f.converged(6, 0)
		f.setOutputConfig(map[string]string{"filename": "/telemetry/out", "format": "proto"})
		Eventually(func(g Gomega) {
			g.Expect(condition(f.cluster(), operatorv1alpha1.ConditionOutputsRunning).Reason).To(Equal(operatorv1alpha1.ReasonOutputsFailed))
			g.Expect(f.output(g, "file").Status.FailedOn).To(HaveLen(1))
			g.Expect(f.eventsOf("Output", "file", operatorv1alpha1.EventOutputFailed)).NotTo(BeEmpty())
		}).WithTimeout(20 * time.Second).Should(Succeed())
		f.quiet(op, 3*time.Second)
		op.Stop()

		events := f.recordedEvents()
		op = startOperator()
		DeferCleanup(func() { op.Stop() })
		Consistently(func(g Gomega) {
			g.Expect(op.writes.madeIn(f.ns)).To(BeEmpty(), "the restarted operator's writes")
		}).WithTimeout(5 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		Expect(f.recordedEvents()).To(Equal(events), "events recorded after the restart")
	})

	It("are, after an operator restart, of the statuses found wrong only, and of a Target of its own entry only", func() {
		f := newFleetOf(2)
		f.addTargets(0, 20)
		// A second Cluster, scaled to zero, selects the same Targets: each has its entry too, which the
		// first Cluster's writes must leave alone and not carry.
		f.addIdleCluster("other")
		op := startOperator()
		f.convergedCollecting(20)
		Eventually(func() map[string]operatorv1alpha1.TargetClusterState {
			return f.targetStatus(targetName(5)).ClusterStates
		}).
			WithTimeout(20 * time.Second).Should(HaveKey("other"))
		f.quiet(op, 3*time.Second)
		op.Stop()

		By("editing, while no operator runs, one Target's entry and one Pipeline's count")
		f.editTargetStatus(targetName(5), func(t *operatorv1alpha1.Target) {
			st := t.Status.ClusterStates[f.name]
			st.Message = "edited while the operator was down"
			t.Status.ClusterStates[f.name] = st
		})
		f.updatePipelineStatus("all", func(p *operatorv1alpha1.Pipeline) { p.Status.TargetsCount = 7 })

		op = startOperator()
		DeferCleanup(func() { op.Stop() })
		Eventually(func(g Gomega) {
			g.Expect(f.targetStatus(targetName(5)).ClusterStates[f.name].Message).To(BeEmpty())
			g.Expect(f.pipelineStatus("all").TargetsCount).To(BeEquivalentTo(20))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		f.quiet(op, 3*time.Second)
		made := op.writes.madeIn(f.ns)
		Expect(made).To(HaveLen(2), "the restarted operator's writes")
		Expect(made).To(ContainElement(HavePrefix("patch *v1alpha1.Pipeline/all/status: ")))
		patch := writtenPatch(made, "patch *v1alpha1.Target/"+targetName(5)+"/status: ")
		Expect(patch).To(HaveKeyWithValue("status", HaveKeyWithValue("clusterStates",
			And(HaveLen(1), HaveKeyWithValue(f.name, And(HaveLen(2), HaveKey("message"), HaveKey("lastUpdated")))))), "the Target status patch: %v", patch)
		Expect(patch["status"]).To(HaveLen(1), "the Target status patch carries its entry only: %v", patch)
		Expect(f.targetStatus(targetName(5)).ClusterStates).To(HaveKeyWithValue("other",
			HaveField("State", operatorv1alpha1.TargetUnassigned)))
	})

	It("are, when one target's connection changes, of that Target's entry only", func() {
		f := newFleetOf(2)
		f.addTargets(0, 20)
		op := startOperator()
		DeferCleanup(func() { op.Stop() })
		f.convergedCollecting(20)
		f.quiet(op, 3*time.Second)
		before := len(op.writes.madeIn(f.ns))

		name := targetName(3)
		pod := f.targetStatus(name).ClusterStates[f.name].Pod
		for o, col := range f.collectors {
			if f.podName(o) == pod {
				col.SetConnectionState(name, "TRANSIENT_FAILURE")
			}
		}
		Eventually(func() string { return f.targetStatus(name).ClusterStates[f.name].ConnectionState }).
			WithTimeout(20 * time.Second).Should(Equal("TRANSIENT_FAILURE"))
		f.quiet(op, 3*time.Second)
		made := op.writes.madeIn(f.ns)[before:]
		// Nothing the Cluster's status or the Pipelines' say changed: they are not written.
		Expect(made).To(HaveLen(1), "the operator's writes")
		patch := writtenPatch(made, "patch *v1alpha1.Target/"+name+"/status: ")
		Expect(patch).To(HaveKeyWithValue("status", HaveKeyWithValue("clusterStates",
			And(HaveLen(1), HaveKeyWithValue(f.name, And(HaveKey("connectionState"), Not(HaveKey("pod")), Not(HaveKey("state")))))),
		), "the Target status patch: %v", patch)
	})

	It("are, when a Target goes, of the Cluster's status and of the one Pipeline that selected it only", func() {
		f := newFleetOf(2)
		f.addEdgePipeline(5)
		f.addTargets(0, 20)
		op := startOperator()
		DeferCleanup(func() { op.Stop() })
		f.convergedCollecting(20)
		f.quiet(op, 3*time.Second)
		before := len(op.writes.madeIn(f.ns))

		f.deleteTarget(10) // selected by Pipeline "all", not by "edge"
		Eventually(func() int32 { return f.pipelineStatus("all").TargetsCount }).WithTimeout(20 * time.Second).Should(BeEquivalentTo(19))
		f.quiet(op, 3*time.Second)
		made := op.writes.madeIn(f.ns)[before:]
		// The Cluster's status says what the push does (ConfigApplied False while pod fleet-N applies the
		// change, True again once it runs it): one write or more, of the Cluster's status only.
		Expect(made).To(ContainElement(HavePrefix("patch *v1alpha1.Pipeline/all/status: ")))
		Expect(made).To(HaveEach(Or(HavePrefix("patch *v1alpha1.Cluster/fleet/status: "), HavePrefix("patch *v1alpha1.Pipeline/all/status: "))))
		Expect(writtenPatch(made, "patch *v1alpha1.Pipeline/all/status: ")).To(HaveKeyWithValue("status", And(HaveLen(2),
			HaveKeyWithValue("targetsCount", BeEquivalentTo(19)),
			HaveKeyWithValue("conditions", ContainElement(HaveKeyWithValue("message", ContainSubstring("selects 19 target(s)")))))))
	})
})

// addIdleCluster adds a Cluster of 0 replicas to the fleet's namespace, with a Pipeline that selects the
// fleet's targets.
func (f *fleet) addIdleCluster(name string) {
	c := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	c.Spec.Image = "ghcr.io/openconfig/gnmic:test"
	c.Spec.Replicas = ptr.To(int32(0))
	c.Spec.API.RestPort = int32(f.port)
	Expect(k8sClient.Create(suiteCtx, c)).To(Succeed())
	p := &operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: name + "-all", Namespace: f.ns},
		Spec: operatorv1alpha1.PipelineSpec{ClusterRef: name,
			TargetSelectors:  []metav1.LabelSelector{{MatchLabels: map[string]string{"fleet": f.name}}},
			SubscriptionRefs: []string{"counters"}}}
	Expect(k8sClient.Create(suiteCtx, p)).To(Succeed())
	DeferCleanup(func() { _ = k8sClient.Delete(suiteCtx, c) })
}

// writtenPatch is the patch of the one write of made that starts with prefix, decoded.
func writtenPatch(made []string, prefix string) map[string]any {
	var found []string
	for _, w := range made {
		if strings.HasPrefix(w, prefix) {
			found = append(found, strings.TrimPrefix(w, prefix))
		}
	}
	Expect(found).To(HaveLen(1), "writes %q in %v", prefix, made)
	var patch map[string]any
	Expect(json.Unmarshal([]byte(found[0]), &patch)).To(Succeed())
	return patch
}

// targetStatus is the named Target's status.
func (f *fleet) targetStatus(name string) operatorv1alpha1.TargetStatus {
	var t operatorv1alpha1.Target
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &t)).To(Succeed())
	return t.Status
}

// pipelineStatus is the named Pipeline's status.
func (f *fleet) pipelineStatus(name string) operatorv1alpha1.PipelineStatus {
	var p operatorv1alpha1.Pipeline
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &p)).To(Succeed())
	return p.Status
}

// editTargetStatus changes the named Target's status as change says, as another writer would.
func (f *fleet) editTargetStatus(name string, change func(*operatorv1alpha1.Target)) {
	t := &operatorv1alpha1.Target{}
	f.editStatus(name, t, func() { change(t) })
}

// updatePipelineStatus changes the named Pipeline's status as change says, as another writer would.
func (f *fleet) updatePipelineStatus(name string, change func(*operatorv1alpha1.Pipeline)) {
	p := &operatorv1alpha1.Pipeline{}
	f.editStatus(name, p, func() { change(p) })
}

// editStatus reads the named object of the fleet's namespace into obj, changes it with change and writes its
// status, again (from a fresh read into an emptied obj) on a conflict.
func (f *fleet) editStatus(name string, obj client.Object, change func()) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		v := reflect.ValueOf(obj).Elem()
		v.Set(reflect.Zero(v.Type()))
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, obj); err != nil {
			return err
		}
		change()
		return k8sClient.Status().Update(suiteCtx, obj)
	})).To(Succeed())
}

// addEdgePipeline adds a second Subscription and Output, and a Pipeline "edge" that sends the first n
// targets through them.
func (f *fleet) addEdgePipeline(n int) {
	var refs []string
	for i := range n {
		refs = append(refs, targetName(i))
	}
	for _, o := range []client.Object{
		&operatorv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "cpu", Namespace: f.ns},
			Spec: operatorv1alpha1.SubscriptionSpec{Paths: []string{"/system/cpus"}, Mode: "STREAM/SAMPLE",
				SampleInterval: &metav1.Duration{Duration: 30 * time.Second}}},
		&operatorv1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Name: "edge-file", Namespace: f.ns},
			Spec: operatorv1alpha1.OutputSpec{Type: "file"}},
		&operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: f.ns},
			Spec: operatorv1alpha1.PipelineSpec{ClusterRef: f.name, TargetRefs: refs, SubscriptionRefs: []string{"cpu"},
				Outputs: &operatorv1alpha1.OutputSelection{OutputRefs: []string{"edge-file"}}}},
	} {
		Expect(k8sClient.Create(suiteCtx, o)).To(Succeed())
	}
}

// convergedCollecting waits until every one of n targets is Assigned and collecting, the Cluster is Ready
// with its configuration applied, and every Pipeline is Ready.
func (f *fleet) convergedCollecting(n int) {
	Eventually(func(g Gomega) {
		c := f.cluster()
		g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
		g.Expect(c.Status.TargetsCount).To(BeEquivalentTo(n))
		g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, operatorv1alpha1.ConditionReady)).To(BeTrue())
		g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, operatorv1alpha1.ConditionConfigApplied)).To(BeTrue())
		g.Expect(f.collectingTargets(g)).To(Equal(n))
		var pipelines operatorv1alpha1.PipelineList
		g.Expect(k8sClient.List(suiteCtx, &pipelines, client.InNamespace(f.ns))).To(Succeed())
		for _, p := range pipelines.Items {
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, operatorv1alpha1.ConditionReady)).To(BeTrue(),
				"pipeline %s", p.Name)
		}
	}).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
}

// quiet waits until the operator has written nothing in the fleet's namespace for the given time.
func (f *fleet) quiet(op *operator, d time.Duration) {
	last, since := op.writes.in(f.ns), time.Now()
	Eventually(func() time.Duration {
		if n := op.writes.in(f.ns); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since)
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(BeNumerically(">=", d))
}

// recordedEvents are the events recorded in the fleet's namespace, each as "<reason> x<count>: <message>".
func (f *fleet) recordedEvents() []string {
	var list corev1.EventList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		out = append(out, fmt.Sprintf("%s x%d: %s", e.Reason, e.Count, e.Message))
	}
	sort.Strings(out)
	return out
}

// collectingTargets counts the Targets of the fleet's namespace whose status says the fleet's Cluster collects
// them: Assigned and collecting.
func (f *fleet) collectingTargets(g Gomega) int {
	var list operatorv1alpha1.TargetList
	g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	collecting := 0
	for _, t := range list.Items {
		if st := t.Status.ClusterStates[f.name]; st.State == operatorv1alpha1.TargetAssigned && st.Collecting {
			collecting++
		}
	}
	return collecting
}
