package fakecollector

import (
	"sync"
	"time"
)

// RealisticQueueCapacity is the buffer of gNMIc's config watcher: target
// changes beyond it in one burst are dropped without an error.
const RealisticQueueCapacity = 128

// RealisticPerChange is how long the worker spends on one target change in
// Realistic mode: about what starting a target on a reachable device on the
// same network costs (dial, Capabilities, Subscribe), short enough that 128
// changes drain in a quarter of a second.
const RealisticPerChange = 2 * time.Millisecond

// WithChangeQueue makes the collector act on target changes the way gNMIc's
// config watcher does: an apply is stored and answered at once, and each
// target it adds, removes or changes becomes one entry in a queue of the
// given capacity, worked off later by a single worker, one entry at a time,
// each taking perChange. Entries that do not fit are dropped silently: the
// target stays configured but its runtime is not changed. A capacity of 0
// drops every change. Without this option target changes are acted on
// within the apply, without limit.
func WithChangeQueue(capacity int, perChange time.Duration) Option {
	return func(c *Collector) {
		c.queue = &changeQueue{capacity: max(capacity, 0), perChange: perChange}
	}
}

// Realistic is WithChangeQueue(RealisticQueueCapacity, RealisticPerChange):
// the real collector's queue capacity as measured (one apply of 200 new
// targets started 128-129 of them) with a per-change time of a healthy
// network.
func Realistic() Option {
	return WithChangeQueue(RealisticQueueCapacity, RealisticPerChange)
}

// targetChange is one target event of the config watcher: a target set to
// config (added or changed), or removed when config is nil.
type targetChange struct {
	name   string
	config map[string]any
}

// changeQueue holds the target changes not yet acted on. It is guarded by the
// collector's mutex, so that an apply enqueues all its changes before the
// worker can take any: how many of a burst are dropped is deterministic.
type changeQueue struct {
	capacity  int
	perChange time.Duration
	entries   []targetChange
	// working is whether the worker is acting on an entry it took.
	working bool
	dropped int
	wake    *sync.Cond
	// idle is closed while nothing is queued or being worked on.
	idle chan struct{}
}

func (q *changeQueue) init(mu *sync.Mutex) {
	q.wake = sync.NewCond(mu)
	q.idle = make(chan struct{})
	close(q.idle)
}

// targetChanged acts on a target change now, or queues it when the
// collector has a change queue. Callers hold c.mu.
func (c *Collector) targetChanged(change targetChange) {
	q := c.queue
	if q == nil {
		c.act(change)
		return
	}
	if len(q.entries) >= q.capacity {
		q.dropped++
		c.count(change.name).Dropped++
		return
	}
	q.entries = append(q.entries, change)
	q.markBusy()
	q.wake.Signal()
}

// work is the single worker of the change queue: it takes one entry, acts on
// it, then holds the queue for the time the change takes (perChange, or the
// blackhole time of a target that never completes its handshake), with the
// lock released so that the API keeps answering meanwhile.
func (c *Collector) work() {
	q := c.queue
	for {
		c.mu.Lock()
		for len(q.entries) == 0 && !c.closed {
			q.wake.Wait()
		}
		if c.closed {
			c.mu.Unlock()
			return
		}
		change := q.entries[0]
		q.entries[0] = targetChange{}
		q.entries = q.entries[1:]
		q.working = true
		start := c.act(change)
		c.mu.Unlock()

		hold := q.perChange
		if start.held > 0 {
			hold = start.held
		}
		if hold > 0 {
			select {
			case <-c.done:
				return
			case <-time.After(hold):
			}
		}

		c.mu.Lock()
		if start.held > 0 {
			c.settle(change.name, start.generation)
		}
		q.working = false
		q.markIdleIfDone()
		c.mu.Unlock()
	}
}

func (q *changeQueue) isIdle() bool {
	select {
	case <-q.idle:
		return true
	default:
		return false
	}
}

func (q *changeQueue) markBusy() {
	if q.isIdle() {
		q.idle = make(chan struct{})
	}
}

func (q *changeQueue) markIdleIfDone() {
	if len(q.entries) == 0 && !q.working && !q.isIdle() {
		close(q.idle)
	}
}
