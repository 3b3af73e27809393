// Package shard shares the Clusters among the operator's replicas and decides,
// for every Cluster, what each replica may do with it while it changes hands.
// It is the pure core of sharding: a controller reads the Leases and Clusters,
// calls it, and writes what it says. It knows nothing of Kubernetes.
//
// Membership is by Lease. Every replica (a member) holds one Lease under an
// identity unique to its process, and renews it. A Lease shows the member
// Ready, Draining (it shuts down gracefully and gives its Clusters up),
// Expired (it did not renew in time, yet may still run) or Dead (it released
// the Lease, or another member marked it dead with a conditional update once
// it had expired; a member whose Lease is marked dead never renews it again).
// Expiry is judged on the judge's own clock: a member times its own Lease
// from when it sent its last successful renewal, others from when they saw a
// renewal, so the holder's view always runs out first.
//
// Assign gives every Cluster to a Ready member with placement.Place: weighted
// rendezvous hashing with bounded load, a Cluster's weight being its cost (its
// targets plus its pods) and every member a pod whose ordinal is a 31-bit hash
// of its identity (collisions resolved by probing, in identity order). A
// Cluster stays with its recorded owner while that owner is Ready and within
// capacity, so a member that joins takes only what the lower bound requires
// and one that leaves hands on only its own Clusters. No load exceeds
// ceil(total cost / members) + largest cost - 1; for 300 Clusters of cost 1 to
// 200 the heaviest member carries 1.02 times the mean on 3 members and 1.03 on
// 4. Assign is deterministic, so every member computes it over its own view:
// there is no coordinator, and views that disagree for a while cost time,
// never safety.
//
// Ownership is fenced. A Cluster records its Owner, a Generation that goes up
// with every takeover, and whether the owner acknowledged a drain; members
// write it only with conditional updates. Decide tells a member, from its view
// and the time, what it may do: the owner reconciles; when another member is
// desired (or the owner is leaving) the owner drains: it finishes the push in
// flight, closes its collector streams and writes an acknowledgement; the
// desired member waits, then takes the Cluster over once the owner has
// acknowledged, or once the owner's Lease is Dead, and reconciles at the new
// generation. Only the recorded owner at the recorded generation, with its
// own Lease valid, is ever told to reconcile, and every push is bounded by
// that Lease's expiry.
//
// On SIGTERM a member marks its Lease leaving, drains, and releases its Lease
// when it owns nothing undrained: its Clusters move at once. On SIGKILL its
// Lease expires; a Ready member marks it dead and the desired members take
// its Clusters over, about one Lease duration later. A member stopped by
// SIGSTOP wakes up with a stale view, but by then its own Lease has run out if
// anyone could have taken a Cluster from it, so Decide tells it to wait, and
// its next renewal fails if its Lease was marked dead: it exits. What no core
// can prevent is a request to a collector sent before the pause and delivered
// after it, since collectors check no fence; the new owner's next full push
// overwrites it.
//
// From the controller-sharding design (seed 004) this takes one Lease per
// instance instead of leader election, the ready, expired and dead states,
// moving a released member's objects without coordination, acquiring an
// expired Lease before forcing its objects away, and the drain handshake
// acknowledged by the old owner before a rebalanced object goes to the new
// one; it leaves out the central sharder, its webhook and label selectors.
// From the horizontal-scaling ADR (seed 002) it takes, of option 2, per-object
// assignment with reassignment when a replica fails and attention to uneven
// load (here costs weigh), and of option 3, a deterministic hash that every
// replica computes without a coordinator; it replaces option 3's hash modulo
// the replica count (which moves nearly everything on a scale event) with
// bounded-load rendezvous, StatefulSet ordinals with hashed identities (so a
// Deployment works), and unguarded reassignment with the fenced handover.
package shard
