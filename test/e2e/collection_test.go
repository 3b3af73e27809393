//go:build e2e

package e2e_test

import (
	"context"
	"maps"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// holdings is what a namespace's fake collectors hold at one moment: target → the pods holding it.
type holdings map[string][]string

func holdingsOf(namespace string) holdings {
	h := holdings{}
	for pod, targets := range collectors.Targets(namespace) {
		for _, t := range targets {
			h[t] = append(h[t], pod)
		}
	}
	for _, pods := range h {
		sort.Strings(pods)
	}
	return h
}

// placement maps each target to the one pod holding it (targets on several pods are left out).
func (h holdings) placement() map[string]string {
	out := make(map[string]string, len(h))
	for t, pods := range h {
		if len(pods) == 1 {
			out[t] = pods[0]
		}
	}
	return out
}

// duplicated counts targets held by more than one collector.
func (h holdings) duplicated() int {
	n := 0
	for _, pods := range h {
		if len(pods) > 1 {
			n++
		}
	}
	return n
}

// expectPlaced waits until every pod of the fleet is Ready, nothing is unassigned, and each of the targets
// is on exactly one fake collector. Ready includes the readiness gate: a collector works its changes off
// after acknowledging them, so the operator marks a pod configured only in a reconcile after the one that
// saw its collector run everything, and a StatefulSet replaces pods that are not Ready all at once.
func expectPlaced(f harness.Fleet, targets int) {
	Eventually(func(g Gomega) { expectPlacedG(g, f, targets) }).WithTimeout(2 * time.Minute).Should(Succeed())
}

// expectPlacedG is one look of expectPlaced.
func expectPlacedG(g Gomega, f harness.Fleet, targets int) {
	s, err := f.Observe(ctx, cp, k8sClient, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.ReadyReplicas).To(Equal(f.Replicas))
	g.Expect(s.Unassigned).To(BeZero())
	g.Expect(holdingsOf(f.Namespace).placement()).To(HaveLen(targets))
	pods := collectorPods(g, f)
	g.Expect(pods).To(HaveLen(int(f.Replicas)))
	for _, p := range pods {
		g.Expect(podReady(&p)).To(BeTrue(), "pod %s not Ready", p.Name)
	}
}

// collection is what a namespace's fake collectors run at one moment (target → the pods running it) and
// which of those targets at least one collector collects (connection READY, subscriptions running): a
// target whose start failed, or is held by a blackholed device, runs without being collected.
type collection struct {
	held       holdings
	collecting map[string]bool
}

func collectionOf(namespace string) collection {
	c := collection{held: holdings{}, collecting: map[string]bool{}}
	for pod, runs := range collectors.Runs(namespace) {
		for t, collecting := range runs {
			c.held[t] = append(c.held[t], pod)
			if collecting {
				c.collecting[t] = true
			}
		}
	}
	for _, pods := range c.held {
		sort.Strings(pods)
	}
	return c
}

// collectionFigures sum up what a collectionTracker saw.
type collectionFigures struct {
	Samples int `json:"samples"`
	// MaxUncollected is the most expected targets no collector collected at one sample: run nowhere, or run
	// without collecting (starting, or failed).
	MaxUncollected int `json:"maxUncollectedTargets"`
	// UncollectedTargetSeconds integrates uncollected targets over time.
	UncollectedTargetSeconds float64 `json:"uncollectedTargetSeconds"`
	// MaxDuplicated is the most targets run by two collectors at one sample, collecting or not.
	MaxDuplicated int `json:"maxDuplicatedTargets"`
	// MaxPodsShort is the most pods at one sample not running at least one of their original targets.
	MaxPodsShort int `json:"maxPodsShortOfTheirTargets"`
	// Strays are targets seen on a pod other than their original one (each counted once).
	Strays int `json:"targetsSeenOffTheirOriginalPod"`
	// FirstStray is when the first stray was seen (zero when none).
	FirstStray time.Time `json:"-"`
}

// collectionTracker samples a namespace's fake collectors every 100 ms against the expected targets and
// their original pods.
type collectionTracker struct {
	mu      sync.Mutex
	figures collectionFigures
	strays  map[string]bool
	// expected maps every target that should be collected to its original pod, "" when it has none (it was
	// created while tracking).
	expected map[string]string
	stop     context.CancelFunc
	done     chan struct{}
}

// trackCollection starts sampling. original maps every expected target to its pod at the start.
func trackCollection(namespace string, original map[string]string) *collectionTracker {
	trackCtx, stop := context.WithCancel(ctx)
	t := &collectionTracker{strays: map[string]bool{}, expected: maps.Clone(original), stop: stop, done: make(chan struct{})}
	if t.expected == nil {
		t.expected = map[string]string{}
	}
	go func() {
		defer close(t.done)
		const every = 100 * time.Millisecond
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		last := time.Now()
		for {
			now := time.Now()
			t.sample(collectionOf(namespace), now.Sub(last))
			last = now
			select {
			case <-trackCtx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return t
}

// Expect adds targets created while tracking: from now on they count as uncollected until a collector
// collects them. They have no original pod.
func (t *collectionTracker) Expect(targets ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, name := range targets {
		if _, ok := t.expected[name]; !ok {
			t.expected[name] = ""
		}
	}
}

// Forget drops deleted targets from the expected ones. Collectors still running them count for
// MaxDuplicated all the same.
func (t *collectionTracker) Forget(targets ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, name := range targets {
		delete(t.expected, name)
	}
}

func (t *collectionTracker) sample(c collection, since time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := &t.figures
	f.Samples++
	uncollected := 0
	short := map[string]bool{}
	for target, pod := range t.expected {
		if !c.collecting[target] {
			uncollected++
		}
		pods := c.held[target]
		if len(pods) == 0 && pod != "" {
			short[pod] = true
		}
		for _, p := range pods {
			if pod != "" && p != pod && !t.strays[target] {
				t.strays[target] = true
				f.Strays++
				if f.FirstStray.IsZero() {
					f.FirstStray = time.Now()
				}
			}
		}
	}
	f.MaxUncollected = max(f.MaxUncollected, uncollected)
	f.UncollectedTargetSeconds += float64(uncollected) * since.Seconds()
	f.MaxDuplicated = max(f.MaxDuplicated, c.held.duplicated())
	f.MaxPodsShort = max(f.MaxPodsShort, len(short))
}

// Figures returns what was seen so far.
func (t *collectionTracker) Figures() collectionFigures {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.figures
}

// Stop ends sampling and returns the figures, the integral rounded to 0.1 target-seconds.
func (t *collectionTracker) Stop() collectionFigures {
	t.stop()
	<-t.done
	f := t.Figures()
	f.UncollectedTargetSeconds = float64(int(f.UncollectedTargetSeconds*10+0.5)) / 10
	return f
}
