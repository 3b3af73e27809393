package handover

import (
	"fmt"
	"math/rand"
	"reflect"
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

// TestSettledStepsAreThoseWorkedOut: taking a settled collector's step without working it out, and finding the
// holders of only the targets a step may add, gives what working every step out over every holder gives, step
// and memory, over random fleets on their way to settling and at rest.
func TestSettledStepsAreThoseWorkedOut(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	settled, held := 0, 0
	for round := range 600 {
		targets := make([]string, 1+rng.Intn(30))
		for i := range targets {
			targets[i] = fmt.Sprintf("t%02d", i)
		}
		pods := 1 + rng.Intn(4)
		desired := randomPlacement(rng, targets, pods)
		in := Input{BatchSize: 1 + rng.Intn(10), DropTimeout: time.Duration(rng.Intn(3)) * time.Minute,
			RepairAfter: time.Duration(rng.Intn(3)) * time.Minute, Now: t0.Add(time.Duration(rng.Intn(600)) * time.Second)}
		for o := range pods {
			c := Collector{Ordinal: o, Desired: desired[o], Sent: slices.Clone(desired[o]), Running: slices.Clone(desired[o]),
				RunningKnown: rng.Intn(6) > 0}
			switch rng.Intn(9) { // most collectors at rest, some not
			case 0: // still holds a target that may belong elsewhere now
				c.Sent = append(c.Sent, targets[rng.Intn(len(targets))])
			case 1:
				if len(c.Running) > 0 {
					c.Running = c.Running[1:]
				}
			case 2:
				c.Changed = []string{targets[rng.Intn(len(targets))]}
			case 5: // a name twice, in all three lists
				if len(c.Desired) > 0 {
					twice := slices.Insert(slices.Clone(c.Desired), 0, c.Desired[0])
					c.Desired, c.Sent, c.Running = twice, slices.Clone(twice), slices.Clone(twice)
				}
			case 3, 4: // a target moved onto it from the collector before it (or elsewhere), which still holds it
				if len(c.Sent) > 0 {
					moved := c.Sent[0]
					c.Sent, c.Running = c.Sent[1:], c.Running[1:]
					if o > 0 {
						prev := &in.Collectors[o-1]
						prev.Sent, prev.Running = append(prev.Sent, moved), append(prev.Running, moved)
					} else {
						in.HeldElsewhere = append(in.HeldElsewhere, moved)
					}
				}
			}
			if rng.Intn(2) == 0 { // else sorted alike, as the operator gives them
				rng.Shuffle(len(c.Sent), func(i, j int) { c.Sent[i], c.Sent[j] = c.Sent[j], c.Sent[i] })
			}
			in.Collectors = append(in.Collectors, c)
		}
		if rng.Intn(4) == 0 {
			in.HeldElsewhere = append(in.HeldElsewhere, targets[rng.Intn(len(targets))])
		}
		mem := Memory{Waiting: map[string]time.Time{}, Progress: map[int]Progress{}, Repairs: map[Slot]int{}}
		if rng.Intn(2) == 0 {
			mem.Progress[rng.Intn(pods)] = Progress{Outstanding: rng.Intn(3), Since: t0}
			mem.Repairs[Slot{rng.Intn(pods), targets[rng.Intn(len(targets))]}] = 1 + rng.Intn(3)
			mem.Waiting[targets[rng.Intn(len(targets))]] = t0
		}
		fast, full := decide(in, mem, true), decide(in, mem, false)
		if !reflect.DeepEqual(fast, full) {
			t.Fatalf("round %d: input %+v\nfast %+v\nfull %+v", round, in, fast, full)
		}
		for _, s := range full.Steps {
			if s.Settled {
				settled++
			}
			if len(s.Waiting) > 0 {
				held++
			}
		}
		held += len(full.Overlaps)
	}
	if settled < 200 || held < 50 {
		t.Fatalf("only %d settled steps and %d waits or overlaps on holders: the rounds did not test the shortcuts", settled, held)
	}
}

// BenchmarkDecide is one decision over 100 collectors of 500 targets each: at rest, with one target's
// configuration changed, and with one target moving between two of them.
func BenchmarkDecide(b *testing.B) {
	fleet := func() Input {
		in := Input{BatchSize: 100, DropTimeout: time.Minute, RepairAfter: time.Minute, Now: t0}
		for o := range 100 {
			names := make([]string, 500)
			for i := range names {
				names[i] = fmt.Sprintf("r%05d", o*500+i)
			}
			in.Collectors = append(in.Collectors, Collector{Ordinal: o, Desired: names, Sent: names, Running: names, RunningKnown: true})
		}
		return in
	}
	rest := fleet()
	changed := fleet()
	changed.Collectors[40].Changed = []string{changed.Collectors[40].Desired[7]}
	moving := fleet()
	moved := moving.Collectors[40].Desired[7]
	moving.Collectors[40].Desired = slices.Delete(slices.Clone(moving.Collectors[40].Desired), 7, 8)
	moving.Collectors[41].Desired = append(slices.Clone(moving.Collectors[41].Desired), moved)
	for _, tc := range []struct {
		name string
		in   Input
	}{{"rest", rest}, {"one-changed", changed}, {"one-moving", moving}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				Decide(tc.in, Memory{})
			}
		})
	}
}
