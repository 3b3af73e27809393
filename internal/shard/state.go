package shard

import (
	"errors"
	"fmt"
)

// ClusterState is the recorded ownership of one Cluster: the only state the
// members share about it. The controller keeps it on the Cluster and writes it
// only with a conditional update (resourceVersion), so that of two members
// that decided on the same state, one write fails.
type ClusterState struct {
	// Owner is the member that took the Cluster over last, "" if none ever did.
	Owner string
	// Generation is the fence: it goes up by one with every takeover. A
	// member may push for the Cluster only at the Generation it took it over
	// at, and only while the recorded state still says so.
	Generation int64
	// Drained is true once Owner acknowledged a drain at Generation: it
	// finished its reconcile in flight, closed its collector streams and will
	// not push at this Generation again. Only a takeover clears it.
	Drained bool
}

// MayPush is the fence check against the recorded state: the member took the
// Cluster over at the generation it observed, nobody took it over since, and
// it did not acknowledge a drain. Every member that Decide tells to reconcile
// passes it (see Decide); a controller may check it again on the state it
// reads back before a push.
func (c ClusterState) MayPush(member string, observedGeneration int64) bool {
	return member != "" && c.Owner == member && c.Generation == observedGeneration && !c.Drained
}

// EventKind names a change to a ClusterState.
type EventKind int

const (
	// Acknowledged is the owner's answer to Drain: it has stopped.
	Acknowledged EventKind = iota + 1
	// TookOver makes Member the owner at the next generation. A member
	// writes it only after Decide returned TakeOver.
	TookOver
)

func (k EventKind) String() string {
	switch k {
	case Acknowledged:
		return "acknowledged"
	case TookOver:
		return "took over"
	}
	return "EventKind(?)"
}

// Event is a change a member writes to a ClusterState.
type Event struct {
	Kind EventKind
	// Member is who writes it.
	Member string
	// Generation is the generation the member observed when it decided.
	Generation int64
}

// ErrStale is wrapped by every rejected event: the state changed since the
// member observed it, or the member has no say in it. The member reads the
// Cluster again and decides anew.
var ErrStale = errors.New("stale event")

// Transition applies an event to a state. An event observed at another
// generation than the state's, or an acknowledgement by another member than
// the owner, is rejected with an error wrapping ErrStale; an event of unknown
// kind is rejected too. A rejected event leaves the state unchanged. Applying
// an acknowledgement twice changes nothing.
func Transition(c ClusterState, e Event) (ClusterState, error) {
	if e.Member == "" {
		return c, fmt.Errorf("%s without a member: %w", e.Kind, ErrStale)
	}
	if e.Generation != c.Generation {
		return c, fmt.Errorf("%s by %q observed generation %d, cluster is at generation %d: %w", e.Kind, e.Member, e.Generation, c.Generation, ErrStale)
	}
	switch e.Kind {
	case Acknowledged:
		if c.Owner != e.Member {
			return c, fmt.Errorf("acknowledged by %q, cluster is owned by %q: %w", e.Member, c.Owner, ErrStale)
		}
		c.Drained = true
		return c, nil
	case TookOver:
		return ClusterState{Owner: e.Member, Generation: c.Generation + 1}, nil
	}
	return c, fmt.Errorf("event by %q: unknown kind %d", e.Member, e.Kind)
}
