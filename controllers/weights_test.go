package controllers_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
)

var _ = Describe("Cluster placing by declared weights", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	declared := func(c *operatorv1alpha1.Cluster) {
		c.Spec.TargetDistribution.WeighBy = operatorv1alpha1.WeighByDeclared
	}

	It("places targets that all weigh 1 exactly as when it counted them: switching moves nothing, scaling moves the same", func() {
		f := newFleet(3, nil, "")
		f.addTargets(0, 10)
		f.converged(10, 0)
		// Counting, nothing new shows on the Targets; the Cluster's units are its counts.
		for name, state := range f.clusterStates() {
			Expect(state.Weight).To(BeZero(), "target %s", name)
			Expect(state.WeightSource).To(BeEmpty(), "target %s", name)
		}
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.TargetUnits).To(BeEquivalentTo(10))
			g.Expect(c.Status.UnassignedUnits).To(BeZero())
			g.Expect(collectorUnits(c)).To(Equal(f.unitsOf(f.holdings(), nil)))
			g.Expect(c.Status.Summary).To(Equal("3/3 pods ready, 10 targets, 0 unassigned"))
		}, 10*time.Second).Should(Succeed())

		before := f.statusPods()
		applies := map[int]int{}
		for o, col := range f.collectors {
			applies[o] = col.ApplyCount()
		}
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			c := f.cluster()
			declared(c)
			return k8sClient.Update(suiteCtx, c)
		})).To(Succeed())
		Eventually(func(g Gomega) {
			for name, state := range f.clusterStates() {
				g.Expect(state.Weight).To(BeEquivalentTo(1), "target %s", name)
				g.Expect(state.WeightSource).To(Equal(operatorv1alpha1.WeightSourceDeclared), "target %s", name)
			}
			g.Expect(f.cluster().Status.Summary).To(Equal("3/3 pods ready, 10 targets, 0 unassigned, 10/10 units assigned"))
		}, 10*time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(f.statusPods()).To(Equal(before))
			for o, col := range f.collectors {
				g.Expect(col.ApplyCount()).To(Equal(applies[o]), "pod %d was pushed again", o)
			}
		}, 3*time.Second, 250*time.Millisecond).Should(Succeed())

		// Scaling 3→4 moves what placing by count moves from the same placement.
		in := placement.Input{Pods: []int{0, 1, 2, 3}, Current: map[string]int{}}
		for i := range 10 {
			name := targetName(i)
			in.Targets = append(in.Targets, placement.Target{Name: name})
			for o := range 3 {
				if before[name] == f.podName(o) {
					in.Current[name] = o
				}
			}
		}
		byCount := placement.Place(in)
		f.scale(4)
		f.addPod(3)
		f.converged(10, 0)
		want := map[string]string{}
		for name, o := range byCount.Assignments {
			want[name] = f.podName(o)
		}
		Expect(f.statusPods()).To(Equal(want))
		Expect(f.cluster().Status.PodCapacity).To(BeEquivalentTo(byCount.Capacity))
	})

	It("never puts more units on a pod than a fixed podCapacity, and says which weights found no room", func() {
		f := newFleetWith(3, func(c *operatorv1alpha1.Cluster) {
			declared(c)
			c.Spec.TargetDistribution.PodCapacity = ptr.To(int32(12))
		})
		weights := []int32{8, 6, 5, 4, 3, 3, 2, 2, 1, 1, 1, 1} // 37 units on 3 × 12: at least one unit is left over
		f.addWeightedTargets(weights)
		byName := map[string]int{}
		for i, w := range weights {
			byName[targetName(i)] = int(w)
		}
		held, c := f.settled(len(weights))
		for pod, units := range f.unitsOf(held, byName) {
			Expect(units).To(BeNumerically("<=", 12), "pod %s holds %d units", pod, units)
		}
		Expect(c.Status.PodCapacity).To(BeEquivalentTo(12))
		Expect(c.Status.TargetUnits).To(BeEquivalentTo(37))
		Expect(collectorUnits(c)).To(Equal(f.unitsOf(held, byName)))
		placed := 0
		for _, units := range f.unitsOf(held, byName) {
			placed += units
		}
		Expect(c.Status.UnassignedUnits).To(BeEquivalentTo(37 - placed))
		Expect(c.Status.UnassignedTargets).To(BeNumerically(">=", 1))
		exhausted := condition(c, operatorv1alpha1.ConditionCapacityExhausted)
		Expect(exhausted.Status).To(Equal(metav1.ConditionTrue))
		Expect(exhausted.Message).To(Equal(fmt.Sprintf("%d target(s) of %d units could not be assigned, no pod has room for them (12 units per pod)",
			c.Status.UnassignedTargets, 37-placed)))
		unassigned := 0
		for name, state := range f.clusterStates() {
			Expect(state.Weight).To(BeEquivalentTo(byName[name]), "target %s", name)
			if state.State == operatorv1alpha1.TargetUnassigned {
				unassigned += byName[name]
				Expect(state.Message).To(Equal(fmt.Sprintf("no collector pod has room for its weight %d", byName[name])))
			}
		}
		Expect(unassigned).To(Equal(37 - placed))
	})

	It("relieves the pod of a target whose weight rose 10× by moving the fewest targets, none from another pod", func() {
		f := newFleetWith(3, declared)
		f.addTargets(0, 36)
		before := f.converged(36, 0)
		Expect(loads(before)).To(Equal([]int{12, 12, 12}))
		was := f.statusPods()
		heavy := targetName(3)
		f.setWeight(3, 10)

		// 45 units on 3 pods: 15 each. The heavy target's pod held 12 targets, 21 units with the new weight:
		// it must shed 6 of its light targets, and nothing else need move.
		byName := map[string]int{heavy: 10}
		var held map[int][]string
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.PodCapacity).To(BeEquivalentTo(15))
			held = f.holdings()
			g.Expect(collectorUnits(c)).To(Equal(f.unitsOf(held, byName)))
			g.Expect(f.unitsOf(held, byName)).To(Equal(map[string]int{f.podName(0): 15, f.podName(1): 15, f.podName(2): 15}))
			g.Expect(f.statusPods()).To(Equal(podsOf(f, held)))
		}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
		moved := 0
		for name, pod := range f.statusPods() {
			if pod != was[name] {
				moved++
				Expect(was[name]).To(Equal(was[heavy]), "%s moved from %s, not the heavy target's pod", name, was[name])
			}
		}
		Expect(f.statusPods()[heavy]).To(Equal(was[heavy]), "the heavy target moved")
		Expect(moved).To(Equal(6))
		Expect(f.clusterStates()[heavy].Weight).To(BeEquivalentTo(10))
	})
})

// addWeightedTargets creates targets r0000, r0001, … declaring the weights given, in order.
func (f *fleet) addWeightedTargets(weights []int32) {
	for i, w := range weights {
		t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: targetName(i), Namespace: f.ns,
			Labels: map[string]string{"fleet": f.name}},
			Spec: operatorv1alpha1.TargetSpec{Address: fmt.Sprintf("10.9.0.%d:57400", i+1), Profile: "routers", Weight: w}}
		Expect(k8sClient.Create(suiteCtx, t)).To(Succeed())
	}
}

// setWeight declares target i's weight.
func (f *fleet) setWeight(i int, weight int32) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var t operatorv1alpha1.Target
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: targetName(i)}, &t); err != nil {
			return err
		}
		t.Spec.Weight = weight
		return k8sClient.Update(suiteCtx, &t)
	})).To(Succeed())
}

// clusterStates is each target's entry for this fleet's Cluster.
func (f *fleet) clusterStates() map[string]operatorv1alpha1.TargetClusterState {
	var list operatorv1alpha1.TargetList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	out := map[string]operatorv1alpha1.TargetClusterState{}
	for _, t := range list.Items {
		out[t.Name] = t.Status.ClusterStates[f.name]
	}
	return out
}

// settled waits until n targets are selected, every collector holds exactly the targets Target status places
// on it, and every other target's status says it is unassigned; it returns the holdings and the Cluster.
func (f *fleet) settled(n int) (map[int][]string, *operatorv1alpha1.Cluster) {
	var held map[int][]string
	var c *operatorv1alpha1.Cluster
	Eventually(func(g Gomega) {
		c = f.cluster()
		g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
		g.Expect(c.Status.TargetsCount).To(BeEquivalentTo(n))
		held = f.holdings()
		onPods := podsOf(f, held)
		states := f.clusterStates()
		g.Expect(states).To(HaveLen(n))
		for name, state := range states {
			g.Expect(state.Pod).To(Equal(onPods[name]), "target %s", name)
			if state.Pod == "" {
				g.Expect(state.State).To(Equal(operatorv1alpha1.TargetUnassigned), "target %s", name)
			}
		}
		g.Expect(c.Status.UnassignedTargets).To(BeEquivalentTo(n - len(onPods)))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	return held, c
}

// podsOf is the pod name of every held target.
func podsOf(f *fleet, held map[int][]string) map[string]string {
	out := map[string]string{}
	for ordinal, names := range held {
		for _, name := range names {
			out[name] = f.podName(ordinal)
		}
	}
	return out
}

// unitsOf is the weight each pod holds, by pod name; a target not in weights weighs 1.
func (f *fleet) unitsOf(held map[int][]string, weights map[string]int) map[string]int {
	out := map[string]int{}
	for ordinal, names := range held {
		pod := f.podName(ordinal)
		out[pod] = 0
		for _, name := range names {
			if w, ok := weights[name]; ok {
				out[pod] += w
			} else {
				out[pod]++
			}
		}
	}
	return out
}

// collectorUnits is the load status.collectors says each pod has.
func collectorUnits(c *operatorv1alpha1.Cluster) map[string]int {
	out := map[string]int{}
	for _, col := range c.Status.Collectors {
		out[col.Pod] = int(col.TargetUnits)
	}
	return out
}
