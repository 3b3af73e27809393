package shard

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	now := t0.Add(20 * time.Second)
	ready := func(holder string) Lease { return renewed(holder, 10*time.Second) }
	expired := func(holder string) Lease { return renewed(holder, 0) }
	leaving := func(holder string) Lease {
		l := ready(holder)
		l.Leaving = true
		return l
	}
	dead := func(holder string) Lease {
		l := expired(holder)
		l.Dead = true
		return l
	}
	ownedByA := ClusterState{Owner: "a", Generation: 7}
	drainedByA := ClusterState{Owner: "a", Generation: 7, Drained: true}

	tests := []struct {
		name string
		view View
		want Action
	}{
		// The recorded owner.
		{"the owner reconciles while desired", View{Self: ready("a"), Cluster: ownedByA, Desired: "a"}, Reconcile},
		{"the owner reconciles while nobody is desired", View{Self: ready("a"), Cluster: ownedByA}, Reconcile},
		{"the owner drains when another member is desired", View{Self: ready("a"), Cluster: ownedByA, Desired: "b"}, Drain},
		{"a leaving owner drains although desired", View{Self: leaving("a"), Cluster: ownedByA, Desired: "a"}, Drain},
		{"a leaving owner drains when nobody is desired", View{Self: leaving("a"), Cluster: ownedByA}, Drain},
		{"an owner whose lease ran out waits", View{Self: expired("a"), Cluster: ownedByA, Desired: "a"}, Wait},
		{"an owner whose lease was marked dead drains", View{Self: dead("a"), Cluster: ownedByA, Desired: "a"}, Drain},
		{"an owner that acknowledged a drain is done", View{Self: ready("a"), Cluster: drainedByA, Desired: "b"}, Ignore},
		{"an owner that acknowledged a drain takes the cluster back when desired again", View{Self: ready("a"), Cluster: drainedByA, Desired: "a"}, TakeOver},
		{"a leaving owner that acknowledged a drain does not take the cluster back", View{Self: leaving("a"), Cluster: drainedByA, Desired: "a"}, Ignore},
		{"an owner whose lease ran out does not take its drained cluster back", View{Self: expired("a"), Cluster: drainedByA, Desired: "a"}, Ignore},

		// Another member.
		{"a member that is not desired ignores the cluster", View{Self: ready("b"), Cluster: ownedByA, Desired: "c", Owner: ready("a")}, Ignore},
		{"a member that is not desired ignores a free cluster", View{Self: ready("b"), Cluster: ClusterState{}, Desired: "c"}, Ignore},
		{"the desired member takes a cluster nobody owns", View{Self: ready("b"), Cluster: ClusterState{}, Desired: "b"}, TakeOver},
		{"the desired member waits for a ready owner to drain", View{Self: ready("b"), Cluster: ownedByA, Desired: "b", Owner: ready("a")}, Wait},
		{"the desired member waits for a leaving owner to drain", View{Self: ready("b"), Cluster: ownedByA, Desired: "b", Owner: leaving("a")}, Wait},
		{"the desired member waits while an expired owner is not marked dead", View{Self: ready("b"), Cluster: ownedByA, Desired: "b", Owner: expired("a")}, Wait},
		{"the desired member takes over from a dead owner", View{Self: ready("b"), Cluster: ownedByA, Desired: "b", Owner: dead("a")}, TakeOver},
		{"the desired member takes over once the owner acknowledged", View{Self: ready("b"), Cluster: drainedByA, Desired: "b", Owner: ready("a")}, TakeOver},
		{"the desired member waits when it has not observed the owner's lease", View{Self: ready("b"), Cluster: ownedByA, Desired: "b"}, Wait},
		{"the desired member waits when given another member's lease", View{Self: ready("b"), Cluster: ownedByA, Desired: "b", Owner: dead("c")}, Wait},
		{"a desired member whose lease ran out waits", View{Self: expired("b"), Cluster: ClusterState{}, Desired: "b"}, Wait},
		{"a leaving member takes nothing", View{Self: leaving("b"), Cluster: ClusterState{}, Desired: "b"}, Ignore},
		{"a dead member takes nothing", View{Self: dead("b"), Cluster: drainedByA, Desired: "b"}, Ignore},
		{"a member without identity does nothing", View{Self: ready(""), Cluster: ClusterState{}, Desired: ""}, Ignore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.view, now); got != tt.want {
				t.Errorf("Decide = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDecideGrantsReconcileOnlyAtTheRecordedOwnership checks every
// combination of view fields: Reconcile goes only to the recorded owner, at
// a state it may push at, with a lease valid at now.
func TestDecideGrantsReconcileOnlyAtTheRecordedOwnership(t *testing.T) {
	now := t0.Add(20 * time.Second)
	members := []string{"", "a", "b"}
	var leases []Lease
	for _, h := range members {
		for _, after := range []time.Duration{0, 10 * time.Second} {
			for _, flags := range []int{0, 1, 2} {
				l := renewed(h, after)
				l.Leaving, l.Dead = flags == 1, flags == 2
				leases = append(leases, l)
			}
		}
	}
	for _, self := range leases {
		for _, owner := range leases {
			for _, recorded := range members {
				for _, desired := range members {
					for _, drained := range []bool{false, true} {
						v := View{Self: self, Cluster: ClusterState{Owner: recorded, Generation: 3, Drained: drained}, Desired: desired, Owner: owner}
						if Decide(v, now) == Reconcile && (!v.Cluster.MayPush(self.Holder, 3) || self.State(now) != Ready) {
							t.Fatalf("Reconcile granted for view %+v", v)
						}
					}
				}
			}
		}
	}
}
