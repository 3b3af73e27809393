package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
)

// An operator installed (or started) over Targets made long before it: each Target's first status is where
// it ended up, as for Targets created in bulk, however old the Target is. The operator's clock runs an hour
// ahead, so that every Target is an hour old to it; the collectors serve plain HTTP, since certificates issued
// an hour ahead are not valid yet.
var _ = Describe("An operator started over a fleet made before it", func() {
	It("writes each Target's status once, though the Cluster had no ready pod when the operator started", func() {
		const targets = 200
		f := newFleetWith(2, func(c *operatorv1alpha1.Cluster) {
			c.Spec.API.Insecure = &operatorv1alpha1.APIInsecure{Reason: "certificates issued an hour ahead are not valid yet"}
		})
		f.removePod(0)
		f.removePod(1)
		f.addTargets(0, targets)

		op := startOperatorPolling(2*time.Second, func(r *cluster.Reconciler) {
			r.Now = func() time.Time { return time.Now().Add(time.Hour) }
		})
		DeferCleanup(op.Stop)
		Eventually(func(g Gomega) {
			cond := condition(f.cluster(), operatorv1alpha1.ConditionCapacityExhausted)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonNoReadyPods))
		}, 15*time.Second).Should(Succeed())

		f.addPod(0)
		f.addPod(1)
		f.converged(targets, 0)
		f.connected(targets)
		written := op.writes.targetStatusIn(f.ns)
		GinkgoWriter.Printf("Target status writes for %d targets: %d\n", targets, written)
		Expect(written).To(BeNumerically("<=", targets+2),
			"a Target's way to its first collector (no pod ready yet, sent, starting) written as it went")
	})

	It("writes a Target's first status when it has waited firstStatusWait, without another wake", func() {
		f := newFleet(1, nil, "")
		f.removePod(0)
		// A poll interval beyond the spec's timeout: only the wait's own look can write the status.
		op := startOperatorPolling(10 * time.Minute)
		DeferCleanup(op.Stop)
		f.addTargets(0, 3)
		Consistently(func(g Gomega) {
			for name, st := range f.statuses() {
				g.Expect(st.State).To(BeEmpty(), "target %s", name)
			}
		}, 5*time.Second, 500*time.Millisecond).Should(Succeed(), "a Target on its way to its first collector, written")
		Eventually(func(g Gomega) {
			statuses := f.statuses()
			g.Expect(statuses).To(HaveLen(3))
			for name, st := range statuses {
				g.Expect(st.State).To(Equal(operatorv1alpha1.TargetUnassigned), "target %s", name)
				g.Expect(st.Message).To(Equal("no collector pod is ready"), "target %s", name)
			}
		}, 15*time.Second, 200*time.Millisecond).Should(Succeed())
	})
})
