package shard

import "time"

// Action is what a member may do with a Cluster.
type Action int

const (
	// Ignore: the Cluster is none of the member's business.
	Ignore Action = iota
	// Reconcile: the member owns the Cluster and may push its collectors,
	// each push bounded by the member's Lease Expiry.
	Reconcile
	// Drain: the member owns the Cluster but must give it up: finish the
	// reconcile in flight, close its collector streams, then write an
	// Acknowledged event.
	Drain
	// Wait: the member must not push. It is the desired owner and the
	// current owner has not let go yet, or it owns the Cluster but its own
	// Lease has run out and must be renewed first.
	Wait
	// TakeOver: the member is the desired owner and the Cluster is free:
	// it writes a TookOver event, and reconciles once that write succeeded.
	TakeOver
)

func (a Action) String() string {
	switch a {
	case Ignore:
		return "Ignore"
	case Reconcile:
		return "Reconcile"
	case Drain:
		return "Drain"
	case Wait:
		return "Wait"
	case TakeOver:
		return "TakeOver"
	}
	return "Action(?)"
}

// View is what one member knows when it decides about one Cluster.
type View struct {
	// Self is the deciding member's own Lease, as it knows it.
	Self Lease
	// Cluster is the Cluster's recorded state as the member last read it,
	// including the member's own writes.
	Cluster ClusterState
	// Desired is the member Assign gives the Cluster to, over the member's
	// view of the Leases and Clusters; "" when it gives it to nobody.
	Desired string
	// Owner is Cluster.Owner's Lease as the member observed it. It is read
	// only when another member owns the Cluster. A Lease of another holder,
	// the zero Lease included, means the owner's Lease was not observed: the
	// owner then counts as alive, never as dead.
	Owner Lease
}

// Decide says what the member holding v.Self may do with the Cluster at now.
// It is a pure function of its arguments.
//
// The owner reconciles while its Lease is valid, it is not leaving and no
// other member is desired; otherwise it drains (or, with a run-out Lease,
// waits). The desired member takes the Cluster over once it is free: it has
// no owner, the owner acknowledged a drain, or the owner's Lease is dead;
// until then it waits. An owner that acknowledged a drain takes its Cluster
// over again, at a new generation, if it is desired once more.
//
// Decide grants Reconcile only to a member that its view records as the
// undrained owner and whose own Lease is Ready at now. A view always holds
// the member's own writes, and a Lease runs out for its holder no later than
// for anyone who could mark it dead, so at any moment at most one member
// holds Reconcile for a Cluster, and only at the recorded generation
// (ClusterState.MayPush): the simulation in this package's tests checks it
// across lagging views, pauses, crashes, joins and leaves.
func Decide(v View, now time.Time) Action {
	me, c := v.Self.Holder, v.Cluster
	if me == "" {
		return Ignore
	}
	self := v.Self.State(now)
	if c.Owner == me {
		return decideAsOwner(v, self)
	}
	if v.Desired != me {
		return Ignore
	}
	switch self {
	case Expired:
		return Wait
	case Draining, Dead:
		return Ignore
	}
	if c.Owner == "" || c.Drained || ownerState(v, now) == Dead {
		return TakeOver
	}
	return Wait
}

func decideAsOwner(v View, self MemberState) Action {
	me, c := v.Self.Holder, v.Cluster
	if c.Drained {
		if v.Desired == me && self == Ready {
			return TakeOver
		}
		return Ignore
	}
	switch self {
	case Expired:
		return Wait
	case Draining, Dead:
		return Drain
	}
	if v.Desired == me || v.Desired == "" {
		return Reconcile
	}
	return Drain
}

// ownerState is the recorded owner's state as observed; an owner whose Lease
// was not observed counts as Ready.
func ownerState(v View, now time.Time) MemberState {
	if v.Owner.Holder != v.Cluster.Owner {
		return Ready
	}
	return v.Owner.State(now)
}
