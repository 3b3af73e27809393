//go:build e2e

package e2e_test

import (
	"cmp"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// collectionBurstResult is what test/e2e/results/collection-burst.json holds.
type collectionBurstResult struct {
	Scenario    string `json:"scenario"`
	Pods        int    `json:"pods"`
	Targets     int    `json:"targets"`
	PodCapacity string `json:"podCapacity"`
	// CreateSeconds is how long the API server took to accept every Target.
	CreateSeconds float64 `json:"secondsToCreateEveryTarget"`
	// CollectedSeconds runs from the first create until every target runs on exactly one collector and
	// collects; StatusSeconds until every Target's status says Assigned and collecting.
	CollectedSeconds float64 `json:"secondsToFullyCollected"`
	StatusSeconds    float64 `json:"secondsToEveryTargetStatusAssignedAndCollecting"`
	// Collectors are the figures of each pod's fake collector at the end.
	Collectors map[string]burstCollectorFigures `json:"collectors"`
	// collectionFigures count a target uncollected from its create on: MaxUncollected is the largest backlog
	// of created Targets no collector collected yet.
	collectionFigures
}

type burstCollectorFigures struct {
	Targets int `json:"targets"`
	Applies int `json:"applies"`
	// LargestApply is the most target changes (added, removed, changed) one apply carried.
	LargestApply int `json:"largestApplyTargetChanges"`
	Dropped      int `json:"droppedTargetChanges"`
}

var _ = Describe("Collection burst: 1,000 targets at once onto 2 pods", Ordered, func() {
	// Automatic capacity: ceil(targets / pods), 500 each once every Target exists.
	fleet := harness.Fleet{Namespace: "collection-burst", Cluster: "telemetry", Replicas: 2}
	const targets = 1000

	It("runs 2 empty pods", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		expectPlaced(fleet, 0)
	})

	It("collects every target of a 1,000-target burst on exactly one collector, none dropped, every status Assigned and collecting", func() {
		tracker := trackCollection(fleet.Namespace, nil)
		start := time.Now()
		createConcurrently(fleet, targets, tracker.Expect)
		created := time.Since(start)

		var collected time.Duration
		Eventually(func(g Gomega) {
			c := collectionOf(fleet.Namespace)
			g.Expect(c.held.placement()).To(HaveLen(targets))
			g.Expect(c.collecting).To(HaveLen(targets))
		}).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		collected = time.Since(start)

		Eventually(func(g Gomega) { everyStatusAssignedAndCollecting(g, fleet, targets) }).
			WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
		statusDone := time.Since(start)
		figures := tracker.Stop()

		perPod := map[string]burstCollectorFigures{}
		total := 0
		for i := range int(fleet.Replicas) {
			pod := fleet.Cluster + "-" + strconv.Itoa(i)
			c, ok := collectors.Collector(fleet.Namespace, pod)
			Expect(ok).To(BeTrue(), "collector of %s", pod)
			Expect(c.Pending()).To(BeZero(), "%s: target changes still queued", pod)
			Expect(c.ConfiguredTargets()).To(Equal(c.Targets()), "%s runs exactly what it is configured with", pod)
			largest := 0
			for _, a := range c.Applied() {
				t := a.Changes.Targets
				largest = max(largest, len(t.Added)+len(t.Removed)+len(t.Changed))
			}
			perPod[pod] = burstCollectorFigures{Targets: len(c.Targets()), Applies: c.ApplyCount(), LargestApply: largest, Dropped: c.Dropped()}
			total += len(c.Targets())
		}
		writeResult("collection-burst", collectionBurstResult{
			Scenario: "collection-burst", Pods: int(fleet.Replicas), Targets: targets, PodCapacity: "automatic",
			CreateSeconds:    created.Round(100 * time.Millisecond).Seconds(),
			CollectedSeconds: collected.Round(100 * time.Millisecond).Seconds(),
			StatusSeconds:    statusDone.Round(100 * time.Millisecond).Seconds(),
			Collectors:       perPod, collectionFigures: figures,
		})
		for pod, f := range perPod {
			Expect(f.Dropped).To(BeZero(), "%s dropped target changes", pod)
			Expect(f.LargestApply).To(BeNumerically("<=", 128), "%s was sent more changes at once than gNMIc buffers", pod)
		}
		Expect(total).To(Equal(targets))
		Expect(figures.MaxDuplicated).To(BeZero(), "a target was on two collectors")
	})
})

// everyStatusAssignedAndCollecting checks that the fleet has n Targets and that every one's status says
// Assigned and collecting.
func everyStatusAssignedAndCollecting(g Gomega, fleet harness.Fleet, n int) {
	var list operatorv1alpha1.TargetList
	g.Expect(k8sClient.List(ctx, &list, client.InNamespace(fleet.Namespace))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(n))
	notYet := 0
	for _, t := range list.Items {
		st := t.Status.ClusterStates[fleet.Cluster]
		if st.State != operatorv1alpha1.TargetAssigned || !st.Collecting {
			notYet++
		}
	}
	g.Expect(notYet).To(BeZero(), "Targets not yet Assigned and collecting in their status")
}

// createConcurrently creates the fleet's Targets 0..n-1 as fast as the API server takes them: several
// writers on a client without client-side rate limit. created is called with each Target's name once the
// API server accepted it.
func createConcurrently(f harness.Fleet, n int, created func(names ...string)) {
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1 // no client-side rate limiter: only the API server sets the pace
	c, err := client.New(cfg, client.Options{Scheme: k8sClient.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	const writers = 16
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f.AddTargets(ctx, c, i, i+1); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					continue
				}
				created(harness.TargetName(i))
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	Expect(first).NotTo(HaveOccurred())
}
