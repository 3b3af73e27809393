package controllers_test

import (
	"fmt"
	"sort"
	"time"

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
var _ = Describe("An operator restart over a converged Cluster", func() {
	const targets = 300

	It("writes nothing, pushes nothing and restarts no target", func() {
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
		op = startOperator()
		DeferCleanup(func() { op.Stop() })
		Eventually(func() float64 { return clusterReconciles().succeeded }).WithTimeout(time.Minute).
			WithPolling(50 * time.Millisecond).Should(BeNumerically(">", before.succeeded))
		// The first reconcile and those of the next polls (every 2 s) find everything as it was.
		Consistently(func(g Gomega) {
			g.Expect(op.writes.madeIn(f.ns)).To(BeEmpty(), "the restarted operator's writes")
		}).WithTimeout(5 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		Expect(clusterReconciles().succeeded-before.succeeded).To(BeNumerically(">=", 2), "reconciles after the restart")
		appliesAfter, startsAfter := f.appliesAndStarts(targets)
		Expect(appliesAfter-applies).To(BeZero(), "configuration pushes after the restart")
		Expect(startsAfter-starts).To(BeZero(), "target starts after the restart")
		Expect(f.recordedEvents()).To(Equal(events), "events recorded after the restart")
	})
})

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
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
		collecting := 0
		for _, t := range list.Items {
			if st := t.Status.ClusterStates[f.name]; st.State == operatorv1alpha1.TargetAssigned && st.Collecting {
				collecting++
			}
		}
		g.Expect(collecting).To(Equal(n))
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
