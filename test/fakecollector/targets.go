package fakecollector

import (
	"reflect"
	"time"
)

// Target states, intended states, connection and subscription states, as
// gNMIc reports them.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateFailed   = "failed"
	StateStopping = "stopping"
	StateStopped  = "stopped"

	IntendedEnabled  = "enabled"
	IntendedDisabled = "disabled"

	ConnectionConnecting       = "CONNECTING"
	ConnectionReady            = "READY"
	ConnectionTransientFailure = "TRANSIENT_FAILURE"

	SubscriptionRunning = "running"
	SubscriptionStopped = "stopped"
)

// TargetStatus is the runtime state of a target: the "state" of
// GET /api/v1/targets and the object of target state events.
type TargetStatus struct {
	IntendedState   string            `json:"intended-state"`
	State           string            `json:"state"`
	FailedReason    string            `json:"failed-reason,omitempty"`
	LastUpdated     time.Time         `json:"last-updated"`
	ConnectionState string            `json:"connection-state,omitempty"`
	Subscriptions   map[string]string `json:"subscriptions,omitempty"`
}

// Collecting reports whether the target delivers telemetry: connection READY
// and at least one subscription, all running.
func (s TargetStatus) Collecting() bool {
	if s.ConnectionState != ConnectionReady || len(s.Subscriptions) == 0 {
		return false
	}
	for _, state := range s.Subscriptions {
		if state != SubscriptionRunning {
			return false
		}
	}
	return true
}

// target is the runtime side of a configured target.
type target struct {
	status    TargetStatus
	announced bool
	// subscribed is whether its subscriptions run (the target started).
	subscribed bool
	// generation invalidates a pending delayed start.
	generation int
	timer      *time.Timer
}

func (t *target) cancelPending() {
	t.generation++
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}

func (c *Collector) addTarget(name string) {
	c.targets[name] = &target{status: TargetStatus{IntendedState: IntendedEnabled}}
	c.metricNames[name] = true
	c.startTarget(name)
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

// startTarget (re)starts a target, as an apply, a reconnect or an enable
// does. A start that fails leaves the target failed: nothing retries it.
func (c *Collector) startTarget(name string) {
	t := c.targets[name]
	t.cancelPending()
	c.count(name).Starts++
	t.status.IntendedState = IntendedEnabled
	c.setState(name, t, StateStarting, "", false)
	if reason := c.startFailure(name); reason != "" {
		c.setState(name, t, StateFailed, reason, false)
		return
	}
	if c.startDelay <= 0 {
		c.setState(name, t, StateRunning, "", true)
		return
	}
	generation := t.generation
	t.timer = time.AfterFunc(c.startDelay, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed || c.targets[name] != t || t.generation != generation {
			return
		}
		t.timer = nil
		c.setState(name, t, StateRunning, "", true)
	})
}

func (c *Collector) stopTarget(name string, t *target) {
	t.cancelPending()
	t.status.IntendedState = IntendedDisabled
	c.setState(name, t, StateStopped, "", false)
}

// startFailure says why a start fails, or "" when it succeeds.
func (c *Collector) startFailure(name string) string {
	cfg := c.objects[kindTargets][name]
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

// setState moves a target to state and publishes the change.
func (c *Collector) setState(name string, t *target, state, reason string, subscribed bool) {
	t.subscribed = subscribed
	t.status.State = state
	t.status.FailedReason = reason
	t.status.ConnectionState = c.connectionState(name, state)
	t.status.Subscriptions = c.subscriptionStates(name, subscribed)
	c.touch(name, t)
}

// touch stamps and publishes the target's status.
func (c *Collector) touch(name string, t *target) {
	t.status.LastUpdated = time.Now().UTC()
	event := eventUpdate
	if !t.announced {
		event, t.announced = eventCreate, true
	}
	c.publish(storeState, kindTargets, name, event, t.status.clone())
}

// connectionState is the injected override, or what gNMIc reports in state.
func (c *Collector) connectionState(name, state string) string {
	if override, ok := c.connOverride[name]; ok {
		return override
	}
	switch state {
	case StateRunning:
		return ConnectionReady
	case StateStarting:
		return ConnectionConnecting
	}
	return ""
}

// subscriptionStates lists the subscriptions a target runs: those it names,
// or all of them when it names none; unknown names are skipped as gNMIc does.
func (c *Collector) subscriptionStates(name string, running bool) map[string]string {
	subs := c.objects[kindSubscriptions]
	names, _ := c.objects[kindTargets][name]["subscriptions"].([]string)
	if len(names) == 0 {
		names = sortedKeys(subs)
	}
	states := make(map[string]string, len(names))
	for _, sub := range names {
		if _, ok := subs[sub]; !ok {
			continue
		}
		states[sub] = SubscriptionStopped
		if running {
			states[sub] = SubscriptionRunning
		}
	}
	if len(states) == 0 {
		return nil
	}
	return states
}

// refreshSubscriptions follows subscription and target-list changes on every
// target, in place: a failed target stays failed.
func (c *Collector) refreshSubscriptions() {
	for _, name := range sortedKeys(c.targets) {
		t := c.targets[name]
		states := c.subscriptionStates(name, t.subscribed)
		if reflect.DeepEqual(states, t.status.Subscriptions) {
			continue
		}
		t.status.Subscriptions = states
		c.touch(name, t)
	}
}

// restartSubscription counts the restart of a changed subscription on every
// target that runs it.
func (c *Collector) restartSubscription(sub string) {
	for name, t := range c.targets {
		if _, runs := t.status.Subscriptions[sub]; runs {
			c.count(name).SubscriptionRestarts++
		}
	}
}

func (s TargetStatus) clone() TargetStatus {
	if s.Subscriptions != nil {
		subs := make(map[string]string, len(s.Subscriptions))
		for k, v := range s.Subscriptions {
			subs[k] = v
		}
		s.Subscriptions = subs
	}
	return s
}
