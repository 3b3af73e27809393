package controllers_test

// These helpers are wdeclared's (controllers/weights_test.go on that branch, not committed when this was
// written), copied verbatim so that the measured-weights specs run; drop this file when merging that one.

import (
	"fmt"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

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
