package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Seed 001, "Full cluster restart": the same ordinals coming back converge to the same placement. Each spec
// places 300 targets on 3 pods with automatic capacity, takes every pod away for longer than the grace
// period, brings them back one at a time (the first one collects everything meanwhile) and expects every
// target on the pod it was on.
var _ = Describe("A full restart of a Cluster's collector pods", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	const targets = 300

	It("ends with every target on its old pod after replicas: 0 and back to 3", func() {
		f := newFleet(3, nil, "2s")
		f.addTargets(0, targets)
		before := byTarget(f.converged(targets, 0))

		f.scale(0)
		for o := range 3 {
			f.removePod(o)
		}
		f.unassignedRemembering(before, "the Cluster is scaled to zero")

		f.scale(3)
		f.comeBackOneByOne(targets, 1, 0, 2)
		f.expectPlacedAsBefore(targets, before)
	})

	It("ends with every target on its old pod after every pod was deleted at once, past the grace period", func() {
		f := newFleet(3, nil, "2s")
		f.addTargets(0, targets)
		before := byTarget(f.converged(targets, 0))

		for o := range 3 {
			f.removePod(o)
		}
		f.unassignedRemembering(before, "no collector pod is ready")

		f.comeBackOneByOne(targets, 2, 0, 1)
		f.expectPlacedAsBefore(targets, before)
	})

	It("takes a pod's targets back when it is ready again after its grace period", func() {
		f := newFleet(3, nil, "2s")
		f.addTargets(0, targets)
		before := byTarget(f.converged(targets, 0))

		f.setReady(1, false)
		Eventually(func(g Gomega) {
			for name, st := range f.statuses() {
				if before[name] == 1 {
					g.Expect(st.Pod).NotTo(Equal(f.podName(1)), "target %s", name)
					g.Expect(st.LastPod).To(Equal(f.podName(1)), "target %s", name)
				}
			}
		}, 20*time.Second, 200*time.Millisecond).Should(Succeed())

		f.setReady(1, true)
		f.expectPlacedAsBefore(targets, before)
	})
})

// byTarget turns holdings (targets by ordinal) into each target's ordinal.
func byTarget(held map[int][]string) map[string]int {
	out := map[string]int{}
	for o, names := range held {
		for _, name := range names {
			out[name] = o
		}
	}
	return out
}

// statuses are this fleet's Cluster entries of every Target's status.
func (f *fleet) statuses() map[string]operatorv1alpha1.TargetClusterState {
	var list operatorv1alpha1.TargetList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	out := map[string]operatorv1alpha1.TargetClusterState{}
	for _, t := range list.Items {
		out[t.Name] = t.Status.ClusterStates[f.name]
	}
	return out
}

// unassignedRemembering waits until every target is unassigned for the reason given, its status naming the
// pod it was on as its last pod.
func (f *fleet) unassignedRemembering(before map[string]int, reason string) {
	Eventually(func(g Gomega) {
		statuses := f.statuses()
		g.Expect(statuses).To(HaveLen(len(before)))
		for name, st := range statuses {
			g.Expect(st.State).To(Equal(operatorv1alpha1.TargetUnassigned), "target %s", name)
			g.Expect(st.Message).To(Equal(reason), "target %s", name)
			g.Expect(st.Pod).To(BeEmpty(), "target %s", name)
			g.Expect(st.LastPod).To(Equal(f.podName(before[name])), "target %s", name)
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
}

// comeBackOneByOne brings the pods back in this order, each once the targets are collected by those before
// it: collection does not wait for every pod.
func (f *fleet) comeBackOneByOne(targets int, ordinals ...int) {
	for _, o := range ordinals {
		f.addPod(o)
		f.converged(targets, 0)
	}
}

// expectPlacedAsBefore waits until every target's status places it on its pod of before, with no target
// waiting for another pod, and the collectors hold what status says.
func (f *fleet) expectPlacedAsBefore(targets int, before map[string]int) {
	Eventually(func(g Gomega) {
		moved := 0
		for name, st := range f.statuses() {
			if st.Pod != f.podName(before[name]) {
				moved++
			}
			g.Expect(st.LastPod).To(BeEmpty(), "target %s still waits for its pod", name)
		}
		g.Expect(moved).To(BeZero(), "targets on another pod than before the restart")
	}, 60*time.Second, time.Second).Should(Succeed())
	Expect(byTarget(f.converged(targets, 0))).To(Equal(before))
}
