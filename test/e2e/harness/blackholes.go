package harness

import (
	"time"

	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// Blackhole is a target's device that accepts TCP and never completes the gRPC handshake, for one start of
// that target on a collector of a namespace. The real gNMIc works target changes off one at a time: such a
// start holds every later change of its collector, deletes included, for the handshake's timeout (about
// 20 s), then leaves the target failed. A fake collector does the same for Hold (fakecollector's
// Blackhole). The device answers again once that start is under way: the start still fails, and the
// operator's next restart of the target succeeds.
type Blackhole struct {
	Namespace, Target string
	Hold              time.Duration
	started           chan struct{}
	// pod and at are written once, before started is closed.
	pod string
	at  time.Time
}

// Started is closed once a collector began the blackholed start.
func (b *Blackhole) Started() <-chan struct{} { return b.started }

// StartedOn says which pod's collector began the blackholed start and when it was seen starting (within
// blackholePoll of the start); ok is false until then.
func (b *Blackhole) StartedOn() (pod string, at time.Time, ok bool) {
	select {
	case <-b.started:
		return b.pod, b.at, true
	default:
		return "", time.Time{}, false
	}
}

// blackholePoll is how often pending blackholes are checked for their start: far below any hold a scenario
// uses, so that the moment a start began is known to that precision.
const blackholePoll = 10 * time.Millisecond

// Blackhole makes the device of target a blackhole for its next start on any collector of namespace, one
// running now or one started later for a new or recreated pod. That start shows the target starting for
// hold and holds the collector's change worker as long; the target then fails, and the next restart
// succeeds. A start is recognised by the target's state "starting", which with DefaultCollectorOptions only
// a blackholed start shows (other starts complete at once).
func (c *Collectors) Blackhole(namespace, target string, hold time.Duration) *Blackhole {
	b := &Blackhole{Namespace: namespace, Target: target, Hold: hold, started: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blackholes[namespace] = append(c.blackholes[namespace], b)
	for _, running := range c.byUID {
		if running.pod.Namespace == namespace {
			running.collector.Blackhole(target, hold)
		}
	}
	if !c.watching {
		c.watching = true
		go c.watchBlackholes()
	}
	return b
}

// ClearBlackholes ends the blackholes of namespace whose start has not happened: their devices answer.
func (c *Collectors) ClearBlackholes(namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.blackholes[namespace] {
		c.clearBlackhole(b)
	}
	delete(c.blackholes, namespace)
}

// watchBlackholes notes the start of each pending blackhole and then lets its device answer, until none is
// pending or the collectors stop.
func (c *Collectors) watchBlackholes() {
	ticker := time.NewTicker(blackholePoll)
	defer ticker.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-ticker.C:
		}
		c.mu.Lock()
		for namespace, pending := range c.blackholes {
			var still []*Blackhole
			for _, b := range pending {
				if !c.noteStart(b) {
					still = append(still, b)
				}
			}
			if len(still) == 0 {
				delete(c.blackholes, namespace)
			} else {
				c.blackholes[namespace] = still
			}
		}
		if len(c.blackholes) == 0 {
			c.watching = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// noteStart records b's start when a collector of its namespace shows the target starting, and ends the
// blackhole everywhere. Callers hold c.mu.
func (c *Collectors) noteStart(b *Blackhole) bool {
	for _, running := range c.byUID {
		if running.pod.Namespace != b.Namespace {
			continue
		}
		if st, ok := running.collector.TargetStatus(b.Target); ok && st.State == fakecollector.StateStarting {
			b.pod, b.at = running.pod.Name, time.Now()
			c.clearBlackhole(b)
			close(b.started)
			c.log("blackholed start of %s on %s/%s: its collector's changes wait %s behind it",
				b.Target, b.Namespace, b.pod, b.Hold)
			return true
		}
	}
	return false
}

// clearBlackhole lets b's device answer on every collector of its namespace. Callers hold c.mu.
func (c *Collectors) clearBlackhole(b *Blackhole) {
	for _, running := range c.byUID {
		if running.pod.Namespace == b.Namespace {
			running.collector.ClearBlackhole(b.Target)
		}
	}
}
