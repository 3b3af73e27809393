package shard

import (
	"slices"
	"time"
)

// Lease is what one replica knows of one member's Lease.
//
// RenewTime depends on who knows it. For the member's own Lease it is when
// the member sent its last renewal that succeeded (sent, not answered, so that
// a renewal that took long only shortens its own view). For another member's
// Lease it is when the observer, on its own clock, saw the Lease's last
// renewal, the way client-go's leader election records observedTime. Either
// way the holder's own view of its Lease ends no later than any observer's, so
// clock offsets between replicas never make two of them both right.
type Lease struct {
	// Holder is the member's identity. It must be unique per process
	// lifetime (for example the pod name and a nonce chosen at start), so
	// that a restarted process never inherits what its predecessor owned.
	Holder    string
	RenewTime time.Time
	Duration  time.Duration
	// Leaving is set by the holder when it shuts down gracefully: it drains
	// its Clusters and takes no new ones.
	Leaving bool
	// Dead is set by the holder when it releases the Lease after draining,
	// or by another member with a conditional update once the Lease has
	// expired (see MayMarkDead). A holder whose Lease is marked dead never
	// renews it again: it exits, and a new process joins under a new identity.
	Dead bool
}

// MemberState is a member's state as the Lease shows it.
type MemberState int

const (
	// Ready members own and take Clusters.
	Ready MemberState = iota
	// Draining members are shutting down: they give their Clusters up.
	Draining
	// Expired members did not renew their Lease in time. They may still
	// run (paused, partitioned): their Clusters stay theirs until the Lease
	// is marked dead.
	Expired
	// Dead members hold nothing: they released their Lease, or it was
	// marked dead after it expired.
	Dead
)

func (s MemberState) String() string {
	switch s {
	case Ready:
		return "Ready"
	case Draining:
		return "Draining"
	case Expired:
		return "Expired"
	case Dead:
		return "Dead"
	}
	return "MemberState(?)"
}

// Expiry is the instant the Lease runs out unless renewed. A member bounds
// every push with it (minus a margin for clock rate drift), so that no push
// of its outlives the moment others may take its Clusters.
func (l Lease) Expiry() time.Time {
	return l.RenewTime.Add(l.Duration)
}

// State is the member's state at now. A Lease is expired from the instant
// RenewTime+Duration on.
func (l Lease) State(now time.Time) MemberState {
	switch {
	case l.Dead:
		return Dead
	case !now.Before(l.Expiry()):
		return Expired
	case l.Leaving:
		return Draining
	}
	return Ready
}

// ReadyMembers lists, sorted and once each, the holders of the Leases that
// are Ready at now: the members to pass to Assign.
func ReadyMembers(leases []Lease, now time.Time) []string {
	var members []string
	for _, l := range leases {
		if l.Holder != "" && l.State(now) == Ready {
			members = append(members, l.Holder)
		}
	}
	slices.Sort(members)
	return slices.Compact(members)
}

// MayMarkDead tells whether the member holding self may now mark other's
// Lease dead. The mark must be a conditional update on the very version of
// the Lease that other was observed in: a renewal since then makes it fail.
// Marking is what lets a Cluster be taken from an owner that stopped renewing
// (seed 004's sharder acquires such a Lease for the same reason): the holder's
// own view of its Lease ran out no later than the observer's, and once marked
// it can never renew, so it can never push again.
func MayMarkDead(self, other Lease, now time.Time) bool {
	return self.Holder != "" && other.Holder != "" && other.Holder != self.Holder &&
		self.State(now) == Ready && other.State(now) == Expired
}
