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

// setState moves a target to state and publishes the change.
func (c *Collector) setState(name string, t *target, state, reason string, subscribed bool) {
	c.accrue()
	t.subscribed = subscribed
	t.status.State = state
	t.status.FailedReason = reason
	t.status.ConnectionState = c.connectionState(name, t)
	t.status.Subscriptions = c.subscriptionStates(t, subscribed)
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

// connectionState is the injected override, or what gNMIc reports for the
// target's state.
func (c *Collector) connectionState(name string, t *target) string {
	if override, ok := c.connOverride[name]; ok {
		return override
	}
	switch t.status.State {
	case StateRunning:
		return ConnectionReady
	case StateStarting:
		return ConnectionConnecting
	case StateFailed:
		if t.unreachable {
			return ConnectionTransientFailure
		}
	}
	return ""
}

// subscriptionStates lists the subscriptions a target runs: those its
// running config names, or all of them when it names none; unknown names are
// skipped as gNMIc does.
func (c *Collector) subscriptionStates(t *target, running bool) map[string]string {
	subs := c.objects[kindSubscriptions]
	names, _ := t.config["subscriptions"].([]string)
	if len(names) == 0 {
		names = sortedKeys(subs)
	}
	states := make(map[string]string, len(names))
	for _, sub := range names {
		if _, ok := subs[sub]; !ok {
			continue
		}
		states[sub] = SubscriptionStopped
		if _, ended := t.ended[sub]; running && !ended {
			states[sub] = SubscriptionRunning
		}
	}
	if len(states) == 0 {
		return nil
	}
	return states
}

// refreshSubscriptions follows subscription changes on every target, in
// place: a failed target stays failed. What flowed until now is accrued once,
// under the states before: accruing before each target went over every
// target's flows for each, n² map lookups per apply to a collector of n.
func (c *Collector) refreshSubscriptions() {
	c.accrue()
	for _, name := range sortedKeys(c.targets) {
		c.setSubscriptionStates(name, c.targets[name])
	}
}

// refreshSubscriptionsOf follows subscription changes on one target, after
// accruing what flowed until now.
func (c *Collector) refreshSubscriptionsOf(name string, t *target) {
	c.accrue()
	c.setSubscriptionStates(name, t)
}

// setSubscriptionStates sets a target's subscription states from its
// configuration, publishing a change; the caller has accrued what flowed.
func (c *Collector) setSubscriptionStates(name string, t *target) {
	states := c.subscriptionStates(t, t.subscribed)
	if reflect.DeepEqual(states, t.status.Subscriptions) {
		return
	}
	t.status.Subscriptions = states
	c.touch(name, t)
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
