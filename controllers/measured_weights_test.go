package controllers_test

import (
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

var _ = Describe("Cluster placing by measured weights", func() {
	const (
		window     = 4 * time.Second
		hysteresis = 6 * time.Second
		poll       = time.Second
	)
	var op *operator
	BeforeEach(func() { op = startOperatorPolling(poll) })
	AfterEach(func() { op.Stop() })

	measured := func(c *operatorv1alpha1.Cluster) {
		c.Spec.TargetDistribution.WeighBy = operatorv1alpha1.WeighByMeasured
		c.Spec.TargetDistribution.MeasuredWeights = &operatorv1alpha1.MeasuredWeights{
			Window: &metav1.Duration{Duration: window}, Hysteresis: &metav1.Duration{Duration: hysteresis},
			MaxWeight: 64,
		}
	}

	It("gives a target that became 10× busier a heavier weight after the hysteresis, and relieves its pod by the fewest moves", func() {
		f := newFleetWith(3, measured)
		rates := map[string]float64{}
		for i := range 36 {
			rates[targetName(i)] = 10
		}
		f.setResponseRates(rates)
		f.addTargets(0, 36)
		before := f.converged(36, 0)
		Expect(loads(before)).To(Equal([]int{12, 12, 12}))
		Eventually(func(g Gomega) {
			for name, state := range f.clusterStates() {
				g.Expect(state.Weight).To(BeEquivalentTo(1), "target %s", name)
				g.Expect(state.WeightSource).To(Equal(operatorv1alpha1.WeightSourceMeasured), "target %s", name)
				g.Expect(rateOf(state)).To(BeNumerically("~", 10, 1.5), "target %s", name)
			}
		}, 20*time.Second, 250*time.Millisecond).Should(Succeed())
		was := f.statusPods()

		heavy := targetName(3)
		rates[heavy] = 100
		f.setResponseRates(rates)
		rose := time.Now()

		// The weight follows once the averaged rate left the band of weight 1 (above 2.83× the typical 10/s,
		// within the first second or so) and stayed out for the hysteresis: never sooner than the hysteresis.
		var changedAfter time.Duration
		Eventually(func(g Gomega) {
			state := f.clusterStates()[heavy]
			if state.Weight == 1 {
				g.Expect(time.Since(rose)).To(BeNumerically("<", window+hysteresis+5*poll), "still weighs 1")
			}
			g.Expect(state.Weight).To(BeEquivalentTo(8), "a rate 10× the typical weighs 8")
			changedAfter = time.Since(rose)
		}, window+hysteresis+10*time.Second, 100*time.Millisecond).Should(Succeed())
		Expect(changedAfter).To(BeNumerically(">=", hysteresis), "the weight changed before the hysteresis passed")

		// 35 + 8 = 43 units on 3 pods: capacity 15. The heavy target's pod held 11 + 8 = 19 units: it sheds
		// the fewest light targets that bring it within, 4, and nothing else moves.
		var held map[int][]string
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.PodCapacity).To(BeEquivalentTo(15))
			g.Expect(c.Status.TargetUnits).To(BeEquivalentTo(43))
			held = f.holdings()
			g.Expect(f.statusPods()).To(Equal(podsOf(f, held)))
			g.Expect(collectorUnits(c)).To(Equal(f.unitsOf(held, map[string]int{heavy: 8})))
		}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
		for pod, units := range f.unitsOf(held, map[string]int{heavy: 8}) {
			Expect(units).To(BeNumerically("<=", 15), "pod %s", pod)
		}
		moved := 0
		for name, pod := range f.statusPods() {
			if pod != was[name] {
				moved++
				Expect(was[name]).To(Equal(was[heavy]), "%s moved from %s, not the heavy target's pod", name, was[name])
			}
		}
		Expect(f.statusPods()[heavy]).To(Equal(was[heavy]), "the heavy target moved")
		Expect(moved).To(Equal(4))
		Expect(rateOf(f.clusterStates()[heavy])).To(BeNumerically("~", 100, 20))
		Eventually(func() []string { return f.events(operatorv1alpha1.EventWeightsChanged) }, 5*time.Second).
			Should(ContainElement(ContainSubstring(heavy + " 1→8")))
	})

	It("weighs a target its declared weight until measured, then what it measures", func() {
		f := newFleetWith(2, measured)
		f.addWeightedTargets([]int32{4, 1, 1, 1})
		f.setResponseRates(map[string]float64{targetName(1): 10, targetName(2): 10, targetName(3): 10})
		f.converged(4, 0)
		silent := targetName(0)
		Eventually(func(g Gomega) {
			states := f.clusterStates()
			g.Expect(states[targetName(1)].WeightSource).To(Equal(operatorv1alpha1.WeightSourceMeasured))
			g.Expect(states[silent].Weight).To(BeEquivalentTo(4))
			g.Expect(states[silent].WeightSource).To(Equal(operatorv1alpha1.WeightSourceDeclared))
			g.Expect(states[silent].ResponseRate).To(BeEmpty())
			g.Expect(f.cluster().Status.TargetUnits).To(BeEquivalentTo(7))
		}, 20*time.Second, 250*time.Millisecond).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(f.clusterStates()[silent].Weight).To(BeEquivalentTo(4), "a silent target keeps its declared weight")
		}, window+hysteresis/2, 250*time.Millisecond).Should(Succeed())

		f.setResponseRates(map[string]float64{silent: 10})
		Eventually(func(g Gomega) {
			state := f.clusterStates()[silent]
			g.Expect(state.Weight).To(BeEquivalentTo(1))
			g.Expect(state.WeightSource).To(Equal(operatorv1alpha1.WeightSourceMeasured))
			g.Expect(f.cluster().Status.TargetUnits).To(BeEquivalentTo(4))
		}, window+hysteresis+15*time.Second, 250*time.Millisecond).Should(Succeed())
	})

	It("keeps measured weights across an operator restart", func() {
		f := newFleetWith(2, measured)
		rates := map[string]float64{targetName(0): 80}
		for i := 1; i < 6; i++ {
			rates[targetName(i)] = 10
		}
		f.setResponseRates(rates)
		f.addTargets(0, 6)
		f.converged(6, 0)
		Eventually(func(g Gomega) {
			g.Expect(f.clusterStates()[targetName(0)].Weight).To(BeEquivalentTo(8))
		}, window+hysteresis+15*time.Second, 250*time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.TargetUnits).To(BeEquivalentTo(13))
			held := f.holdings()
			g.Expect(f.statusPods()).To(Equal(podsOf(f, held)))
			g.Expect(collectorUnits(c)).To(Equal(f.unitsOf(held, map[string]int{targetName(0): 8})))
		}, 20*time.Second, 250*time.Millisecond).Should(Succeed())
		placed := f.statusPods()

		op.Stop()
		op = startOperatorPolling(poll)
		Consistently(func(g Gomega) {
			state := f.clusterStates()[targetName(0)]
			g.Expect(state.Weight).To(BeEquivalentTo(8))
			g.Expect(state.WeightSource).To(Equal(operatorv1alpha1.WeightSourceMeasured))
			g.Expect(f.statusPods()).To(Equal(placed))
		}, window+hysteresis, 250*time.Millisecond).Should(Succeed())
	})

	It("counts a target collecting while its subscription shows stopped but its responses keep counting", func() {
		f := newFleetWith(1, measured)
		f.setResponseRates(map[string]float64{targetName(0): 10, targetName(1): 10})
		f.addTargets(0, 2)
		f.converged(2, 0)
		f.connected(2)
		for _, name := range []string{targetName(0), targetName(1)} {
			f.collectors[0].StaleSubscription(name, "counters")
		}
		// r0001's device really ends the stream: nothing counts any more.
		f.collectors[0].SetResponseRate(targetName(1), 0)
		Eventually(func(g Gomega) {
			states := f.clusterStates()
			g.Expect(states[targetName(0)].Collecting).To(BeTrue())
			g.Expect(states[targetName(0)].Message).To(Equal(
				"collecting: its responses keep counting though subscription counters shows stopped"))
			g.Expect(states[targetName(1)].Collecting).To(BeFalse())
			g.Expect(states[targetName(1)].Message).To(Equal("subscription counters stopped"))
		}, 15*time.Second, 250*time.Millisecond).Should(Succeed())
	})
})

// setResponseRates tells every collector of the fleet how fast the named targets answer, wherever they run.
func (f *fleet) setResponseRates(rates map[string]float64) {
	for _, col := range f.collectors {
		col.SetResponseRates(rates)
	}
}

// rateOf is the response rate a target's status reports, 0 when none.
func rateOf(state operatorv1alpha1.TargetClusterState) float64 {
	rate, _ := strconv.ParseFloat(state.ResponseRate, 64)
	return rate
}
