package fakecollector

import (
	"reflect"
	"time"
)

// target is the runtime side of a target: what the collector runs, which
// follows the configuration only when a change is acted on.
type target struct {
	status    TargetStatus
	announced bool
	// config is the configuration last acted on for the target: what it
	// runs, and the "config" of GET /api/v1/targets. A change not acted on
	// yet, or dropped, does not show in it.
	config map[string]any
	// subscribed is whether its subscriptions run (the target started).
	subscribed bool
	// unreachable is whether its last start timed out on a device that
	// never completed the handshake.
	unreachable bool
	// ended are the subscriptions whose stream the device ended, with why.
	ended map[string]string
	// generation invalidates a pending delayed completion of a start.
	generation int
	timer      *time.Timer
	finish     func()
}

func (t *target) cancelPending() {
	t.generation++
	if t.timer != nil {
		t.timer.Stop()
		t.timer, t.finish = nil, nil
	}
}

// started is what a start left pending: held is how long it holds the
// change queue (the blackhole time, 0 for any other start), generation
// identifies the start.
type started struct {
	held       time.Duration
	generation int
}

// act makes the runtime follow one target change, as gNMIc's targets manager
// does on a config event: a removal stops and forgets the target; a set
// creates and starts a target it does not run (also when its add was
// dropped earlier), ignores a config equal to the running one, reconnects on
// a changed connection field and updates the rest in place (a failed target
// stays failed).
func (c *Collector) act(change targetChange) started {
	c.accrue()
	if change.config == nil {
		c.removeTarget(change.name)
		return started{}
	}
	t, ok := c.targets[change.name]
	if !ok {
		return c.addTarget(change.name, change.config)
	}
	if reflect.DeepEqual(t.config, change.config) {
		return started{}
	}
	reconnect := !reflect.DeepEqual(connectionSpec(t.config), connectionSpec(change.config))
	t.config = change.config
	if reconnect {
		return c.startTarget(change.name)
	}
	c.refreshSubscriptionsOf(change.name, t)
	return started{}
}

func (c *Collector) addTarget(name string, config map[string]any) started {
	c.targets[name] = &target{status: TargetStatus{IntendedState: IntendedEnabled}, config: config}
	c.metricNames[name] = true
	return c.startTarget(name)
}

func (c *Collector) removeTarget(name string) {
	t := c.targets[name]
	if t == nil {
		return
	}
	t.cancelPending()
	delete(c.targets, name)
	c.publish(storeState, kindTargets, name, eventDelete, t.status.clone())
}

// BlackholeReason is the failed-reason of a blackholed target once its start
// gave up: gRPC's connect attempt timed out and the Capabilities request
// that gNMIc sends first failed with it.
const BlackholeReason = `rpc error: code = Unavailable desc = connection error: desc = "transport: authentication handshake failed: context deadline exceeded"`

// startTarget (re)starts a target, as an apply, a reconnect or an enable
// does. A start that fails leaves the target failed: nothing retries it. A
// blackholed target stays starting for its blackhole time, then fails.
func (c *Collector) startTarget(name string) started {
	t := c.targets[name]
	t.cancelPending()
	c.count(name).Starts++
	t.status.IntendedState = IntendedEnabled
	t.unreachable = false
	c.setState(name, t, StateStarting, "", false)
	if reason := c.startFailure(name, t); reason != "" {
		c.setState(name, t, StateFailed, reason, false)
		return started{}
	}
	if d, ok := c.blackholes[name]; ok {
		c.later(name, t, d, func() {
			t.unreachable = true
			c.setState(name, t, StateFailed, BlackholeReason, false)
		})
		return started{held: d, generation: t.generation}
	}
	if c.startDelay <= 0 {
		c.setState(name, t, StateRunning, "", true)
		return started{}
	}
	c.later(name, t, c.startDelay, func() { c.setState(name, t, StateRunning, "", true) })
	return started{}
}

// later completes a start after d, unless the target restarts, is removed
// or the collector closes first.
func (c *Collector) later(name string, t *target, d time.Duration, finish func()) {
	generation := t.generation
	t.finish = finish
	t.timer = time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed || c.targets[name] != t || t.generation != generation {
			return
		}
		t.timer, t.finish = nil, nil
		finish()
	})
}

// settle completes now the pending start the worker waited for, so that it
// is finished before the next change is acted on, whichever of the timer and
// the worker gets the lock first: cancelling makes a timer that already
// fired do nothing.
func (c *Collector) settle(name string, generation int) {
	t := c.targets[name]
	if t == nil || t.generation != generation || t.finish == nil {
		return
	}
	finish := t.finish
	t.cancelPending()
	finish()
}

func (c *Collector) stopTarget(name string, t *target) {
	t.cancelPending()
	t.status.IntendedState = IntendedDisabled
	c.setState(name, t, StateStopped, "", false)
}

// startFailure says why a start of the config the target runs fails, or ""
// when it succeeds.
func (c *Collector) startFailure(name string, t *target) string {
	cfg := t.config
	if timeout, _ := cfg["timeout"].(int64); timeout <= 0 {
		return "failed to create gNMI client: context deadline exceeded (no timeout: dialed with a zero timeout)"
	}
	if insecure, _ := cfg["insecure"].(bool); !insecure {
		if _, ok := cfg["skip-verify"]; !ok {
			return "neither insecure nor skip-verify set: gNMIc dereferences skip-verify and may panic"
		}
	}
	if reason, ok := c.failNext[name]; ok {
		delete(c.failNext, name)
		return reason
	}
	if reason, ok := c.devicesDown[name]; ok {
		return reason
	}
	return ""
}
