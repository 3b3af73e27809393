package handover

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// simCollector models the real collector: a configuration acknowledged at once, a bounded queue of target
// changes that overflows silently, and a worker that acts on a few changes per tick.
type simCollector struct {
	sent    []string
	queue   []simChange
	running map[string]bool
	dropped int
}

type simChange struct {
	target string
	add    bool
}

type simFleet struct {
	collectors []*simCollector
	capacity   int
	rate       int
}

// apply is an acknowledged apply: the differences to what was sent before are queued, overflow dropped.
func (f *simFleet) apply(c *simCollector, send []string) {
	old, next := setOf(c.sent), setOf(send)
	for _, t := range sortedDiff(old, next) {
		f.enqueue(c, simChange{t, false})
	}
	for _, t := range sortedDiff(next, old) {
		f.enqueue(c, simChange{t, true})
	}
	c.sent = slices.Clone(send)
}

func (f *simFleet) enqueue(c *simCollector, ch simChange) {
	if len(c.queue) >= f.capacity {
		c.dropped++
		return
	}
	c.queue = append(c.queue, ch)
}

func (f *simFleet) work(rng *rand.Rand) {
	for _, c := range f.collectors {
		n := rng.Intn(f.rate + 1)
		for ; n > 0 && len(c.queue) > 0; n-- {
			ch := c.queue[0]
			c.queue = c.queue[1:]
			if ch.add {
				c.running[ch.target] = true
			} else {
				delete(c.running, ch.target)
			}
		}
	}
}

// onTwo lists the targets that two collectors run at once.
func (f *simFleet) onTwo() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range f.collectors {
		for t := range c.running {
			if seen[t] {
				out = append(out, t)
			}
			seen[t] = true
		}
	}
	return out
}

func randomPlacement(rng *rand.Rand, targets []string, pods int) [][]string {
	out := make([][]string, pods)
	for _, t := range targets {
		o := rng.Intn(pods)
		out[o] = append(out[o], t)
	}
	return out
}

// run drives decisions against the fleet until every collector is settled, and returns the number of ticks.
func (f *simFleet) run(t *testing.T, rng *rand.Rand, desired [][]string, batch int, maxTicks int) int {
	t.Helper()
	mem := Memory{}
	now := t0
	for tick := 0; tick < maxTicks; tick++ {
		in := Input{BatchSize: batch, DropTimeout: time.Hour, RepairAfter: 30 * time.Second, Now: now}
		for o, c := range f.collectors {
			in.Collectors = append(in.Collectors, Collector{Ordinal: o, Desired: desired[o], Sent: c.sent,
				Running: sortedKeys(c.running), RunningKnown: true})
		}
		d := Decide(in, mem)
		mem = d.Memory
		if len(d.Overlaps) > 0 {
			t.Fatalf("tick %d: overlaps reported with an hour's drop timeout: %+v", tick, d.Overlaps)
		}
		settled := true
		for _, s := range d.Steps {
			settled = settled && s.Settled
			c := f.collectors[s.Ordinal]
			if changes := len(s.Removed) + len(s.Repaired) + len(s.Update); changes > batch {
				t.Fatalf("tick %d: collector %d sent %d changes, batch %d", tick, s.Ordinal, changes, batch)
			}
			if s.Changes() {
				f.apply(c, s.Send)
			}
		}
		if settled {
			return tick
		}
		f.work(rng)
		if two := f.onTwo(); len(two) > 0 {
			t.Fatalf("tick %d: targets on two collectors: %v", tick, two)
		}
		now = now.Add(time.Second)
	}
	t.Fatalf("not settled after %d ticks", maxTicks)
	return maxTicks
}

// Whatever the placement and its change, and however slowly collectors work, no target ever runs on two
// collectors, no collector's buffer overflows, and every collector ends up running exactly its targets.
func TestDecideConvergesWithoutOverlapOrOverflow(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		targets := names("t", 0, 1+rng.Intn(600))
		pods := 1 + rng.Intn(6)
		f := &simFleet{capacity: 128, rate: 1 + rng.Intn(60)}
		for o := 0; o < pods; o++ {
			f.collectors = append(f.collectors, &simCollector{running: map[string]bool{}})
		}
		batch := 1 + rng.Intn(128)
		t.Run(fmt.Sprintf("%d targets on %d pods, batch %d, rate %d", len(targets), pods, batch, f.rate), func(t *testing.T) {
			first := randomPlacement(rng, targets, pods)
			f.run(t, rng, first, batch, 5000)
			second := randomPlacement(rng, targets, pods)
			f.run(t, rng, second, batch, 5000)
			for o, c := range f.collectors {
				if c.dropped > 0 {
					t.Fatalf("collector %d dropped %d changes", o, c.dropped)
				}
				if !equalSets(c.running, setOf(second[o])) {
					t.Fatalf("collector %d runs %d targets, wants %d", o, len(c.running), len(second[o]))
				}
			}
		})
	}
}

// A collector whose buffer is smaller than the batch drops changes; repairs bring every target back.
func TestDecideRepairsDroppedChanges(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	targets := names("t", 0, 300)
	f := &simFleet{capacity: 50, rate: 10}
	for o := 0; o < 2; o++ {
		f.collectors = append(f.collectors, &simCollector{running: map[string]bool{}})
	}
	desired := randomPlacement(rng, targets, 2)
	ticks := f.run(t, rng, desired, 100, 20000)
	dropped := f.collectors[0].dropped + f.collectors[1].dropped
	if dropped == 0 {
		t.Fatal("the collectors dropped nothing: the test proves no repair")
	}
	for o, c := range f.collectors {
		if !equalSets(c.running, setOf(desired[o])) {
			t.Fatalf("collector %d runs %d targets, wants %d", o, len(c.running), len(desired[o]))
		}
	}
	t.Logf("%d changes dropped and repaired; settled after %d ticks", dropped, ticks)
}
