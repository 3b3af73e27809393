package fakecollector

import (
	"net/http"
	"time"
)

// applyFailure is an injected answer to every apply.
type applyFailure struct {
	status int
	errors []string
}

// FailStart makes the next start of the named target fail with reason: the
// target goes to state failed and stays there, even through identical
// applies, until it is re-enabled or reconnected. Later starts succeed.
func (c *Collector) FailStart(name, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failNext[name] = reason
}

// DeviceDown makes every start of the named target fail with reason until
// DeviceUp. Like gNMIc, the fake does not retry when the device comes back.
func (c *Collector) DeviceDown(name, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.devicesDown[name] = reason
}

// DeviceUp lets starts of the named target succeed again. A target that
// already failed stays failed until it is re-enabled.
func (c *Collector) DeviceUp(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.devicesDown, name)
}

// FailApply makes every apply answer status with {"errors": errs} and change
// nothing, until ClearApplyFailure.
func (c *Collector) FailApply(status int, errs ...string) {
	if len(errs) == 0 {
		errs = []string{http.StatusText(status)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.applyFailure = &applyFailure{status: status, errors: errs}
}

// ClearApplyFailure lets applies succeed again.
func (c *Collector) ClearApplyFailure() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.applyFailure = nil
}

// SetConnectionState makes the named target report state (READY,
// TRANSIENT_FAILURE, IDLE, ...) as its gRPC connection state, now and after
// later starts, until ClearConnectionState. A target reported failed with
// state READY mimics gNMIc's "up and ready while collecting nothing".
func (c *Collector) SetConnectionState(name, state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accrue()
	c.connOverride[name] = state
	c.refreshConnection(name)
}

// ClearConnectionState returns the named target to its natural connection
// state.
func (c *Collector) ClearConnectionState(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accrue()
	delete(c.connOverride, name)
	c.refreshConnection(name)
}

func (c *Collector) refreshConnection(name string) {
	t, ok := c.targets[name]
	if !ok {
		return
	}
	state := c.connectionState(name, t)
	if state == t.status.ConnectionState {
		return
	}
	t.status.ConnectionState = state
	c.touch(name, t)
}

// Blackhole makes the named target's device accept TCP and never complete
// the gRPC handshake, from its next start on, until ClearBlackhole. Such a
// start shows the target starting (connection CONNECTING, subscriptions
// stopped) for d, then failed with BlackholeReason, connection
// TRANSIENT_FAILURE and subscriptions stopped, where it stays like any
// failed start. gNMIc's own d is gRPC's connect timeout, about 20 s.
//
// With a change queue, the worker is busy with that start for d, so every
// later queued change, deletes included, waits behind it. Without one, only
// the target itself is affected.
func (c *Collector) Blackhole(name string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blackholes[name] = d
}

// ClearBlackhole lets starts of the named target succeed again. A start
// already under way still fails, and a failed target stays failed until it
// is re-enabled.
func (c *Collector) ClearBlackhole(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.blackholes, name)
}

// EndSubscription makes the device of a running target end one subscription's
// stream, as gNMIc reports it: the target stays running with its connection
// READY, the subscription shows stopped and the target a failed-reason, and
// nothing is collected for it until ResumeSubscription.
func (c *Collector) EndSubscription(name, sub, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.targets[name]
	if !ok {
		return
	}
	c.accrue()
	if t.ended == nil {
		t.ended = map[string]string{}
	}
	t.ended[sub] = reason
	t.status.FailedReason = reason
	t.status.Subscriptions = c.subscriptionStates(t, t.subscribed)
	c.touch(name, t)
}

// ResumeSubscription lets the device stream the subscription again.
func (c *Collector) ResumeSubscription(name, sub string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.targets[name]
	if !ok {
		return
	}
	c.accrue()
	delete(t.ended, sub)
	if len(t.ended) == 0 {
		t.status.FailedReason = ""
	}
	t.status.Subscriptions = c.subscriptionStates(t, t.subscribed)
	c.touch(name, t)
}
