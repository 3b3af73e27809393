package gnmic

import (
	"maps"
	"time"
)

// Target states (TargetStatus.State). Running only means the target was
// started; see Collecting.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateFailed   = "failed"
	StateStopping = "stopping"
	StateStopped  = "stopped"
	StatePaused   = "paused"
)

// Intended states (TargetStatus.IntendedState).
const (
	IntendedEnabled  = "enabled"
	IntendedDisabled = "disabled"
)

// gRPC connectivity states (TargetStatus.ConnectionState); it may also be
// empty when no connection was ever attempted.
const (
	ConnectionIdle             = "IDLE"
	ConnectionConnecting       = "CONNECTING"
	ConnectionReady            = "READY"
	ConnectionTransientFailure = "TRANSIENT_FAILURE"
	ConnectionShutdown         = "SHUTDOWN"
)

// Subscription states (values of TargetStatus.Subscriptions).
const (
	SubscriptionRunning = "running"
	SubscriptionStopped = "stopped"
)

// TargetState is one element of GET /api/v1/targets: a target the collector
// runs. Config is what the operator reads of the target's configuration as
// the collector stores it (password and token masked); the rest of it is
// skipped when decoding, for a collector lists every target it runs whenever
// it is read.
type TargetState struct {
	Name   string            `json:"name"`
	Config TargetStateConfig `json:"config"`
	State  TargetStatus      `json:"state"`
}

// TargetStateConfig is what the operator reads of a running target's
// configuration.
type TargetStateConfig struct {
	// TunnelType is the type a dial-in device registered with, for a target
	// the collector runs through its tunnel server (TunnelTargetTypeKey).
	TunnelType string `json:"tunnel-target-type,omitempty"`
}

// TargetStatus is the runtime state of a target, as found in TargetState and
// as the object of target state events.
type TargetStatus struct {
	IntendedState   string            `json:"intended-state"`
	State           string            `json:"state"`
	FailedReason    string            `json:"failed-reason,omitempty"`
	LastUpdated     time.Time         `json:"last-updated"`
	ConnectionState string            `json:"connection-state,omitempty"`
	Subscriptions   map[string]string `json:"subscriptions,omitempty"`
}

// Equal tells whether s and o say the same of a target.
func (s TargetStatus) Equal(o TargetStatus) bool {
	return s.IntendedState == o.IntendedState && s.State == o.State && s.FailedReason == o.FailedReason &&
		s.LastUpdated.Equal(o.LastUpdated) && s.ConnectionState == o.ConnectionState && maps.Equal(s.Subscriptions, o.Subscriptions)
}

// Collecting reports whether the target delivers telemetry: its gRPC
// connection is READY and it has at least one subscription, all running.
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

// Failed reports whether the target failed. The collector does not retry a
// target that failed to start, even after the device recovers: restart it
// with Client.EnableTarget.
func (s TargetStatus) Failed() bool {
	return s.State == StateFailed
}

// Collecting reports whether the target delivers telemetry (see
// TargetStatus.Collecting).
func (t TargetState) Collecting() bool { return t.State.Collecting() }

// Failed reports whether the target failed (see TargetStatus.Failed).
func (t TargetState) Failed() bool { return t.State.Failed() }
