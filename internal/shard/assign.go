package shard

import (
	"slices"

	"github.com/gnmic-operator/gnmic-operator/internal/placement"
)

// AssignInput is everything Assign needs to know.
type AssignInput struct {
	// Members are the identities of the Ready members (see ReadyMembers).
	// Order does not matter; "" and duplicates are ignored.
	Members []string
	// Clusters are the Clusters to share; order does not matter. A key
	// given twice counts once, with the larger cost.
	Clusters []Cluster
	// Owners maps a Cluster's key to its recorded owner (ClusterState.Owner),
	// drained or not. An owner that is not among Members is gone; "" means
	// no owner. Entries for keys that are not in Clusters are ignored.
	Owners map[string]string
}

// Cluster is one collector fleet to give a member.
type Cluster struct {
	// Key is "namespace/name". It is the only thing the Cluster's preference
	// among members depends on.
	Key string
	// Cost is the Cluster's share of the work, its targets plus its pods.
	// Below 1 counts as 1, above placement.MaxWeight as placement.MaxWeight.
	Cost int
}

// Assignment is the outcome of Assign.
type Assignment struct {
	// Owners maps every Cluster's key to the member that should own it.
	Owners map[string]string
	// Load maps every member to the total cost of its Clusters (0 if none).
	Load map[string]int
	// Capacity bounds every Load: the even share ceil(total cost / members)
	// plus the largest cost minus one (see placement's automatic capacity).
	Capacity int
	// Moves lists, sorted by Cluster, the Clusters whose owner changes. A
	// Cluster without an owner that gets one is not a move.
	Moves []Move
	// LowerBoundMoves is the fewest moves any assignment within Capacity
	// makes (placement's lower bound). With every cost 1, len(Moves) equals it.
	LowerBoundMoves int
	// Unassigned lists, sorted, the Clusters left without an owner. It is
	// empty whenever there is a member.
	Unassigned []string
}

// Move is a Cluster changing owner: a handover to run.
type Move struct {
	Cluster string
	// From is the recorded owner, live or gone.
	From string
	// To is the new owner, "" when there is no member.
	To string
}

// Assign shares the Clusters among the members with placement.Place:
// weighted rendezvous hashing with bounded load, every member a pod whose
// ordinal is a hash of its identity (see ordinals). A Cluster stays with its
// recorded owner while that owner is a member with room, and moves only when
// its owner is gone or over capacity. It is a pure function, and the same
// input in any order gives the same Assignment.
func Assign(in AssignInput) Assignment {
	live := memberSet(in.Members)
	gone := goneOwners(in.Owners, live)
	byIdentity, byOrdinal := ordinals(live, gone, memberHash)

	pods := make([]int, len(live))
	for i, m := range live {
		pods[i] = byIdentity[m]
	}
	targets := make([]placement.Target, len(in.Clusters))
	for i, c := range in.Clusters {
		targets[i] = placement.Target{Name: c.Key, Weight: min(max(c.Cost, 1), placement.MaxWeight)}
	}
	current := make(map[string]int, len(in.Owners))
	for key, owner := range in.Owners {
		if owner != "" {
			current[key] = byIdentity[owner]
		}
	}
	r := placement.Place(placement.Input{Pods: pods, Targets: targets, Current: current})

	a := Assignment{
		Owners:          make(map[string]string, len(r.Assignments)),
		Load:            make(map[string]int, len(live)),
		Capacity:        r.Capacity,
		Moves:           make([]Move, len(r.Moves)),
		LowerBoundMoves: r.LowerBoundMoves,
		Unassigned:      r.Unassigned,
	}
	for key, o := range r.Assignments {
		a.Owners[key] = byOrdinal[o]
	}
	for o, load := range r.Load {
		a.Load[byOrdinal[o]] = load
	}
	for i, m := range r.Moves {
		a.Moves[i] = Move{Cluster: m.Target, From: byOrdinal[m.From]}
		if m.To != placement.NoPod {
			a.Moves[i].To = byOrdinal[m.To]
		}
	}
	return a
}

// memberSet is the members sorted, without "" and duplicates.
func memberSet(members []string) []string {
	set := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == "" })
	slices.Sort(set)
	return slices.Compact(set)
}

// goneOwners are the recorded owners that are not members, sorted, once each.
func goneOwners(owners map[string]string, live []string) []string {
	var gone []string
	for _, owner := range owners {
		if _, isLive := slices.BinarySearch(live, owner); owner != "" && !isLive {
			gone = append(gone, owner)
		}
	}
	slices.Sort(gone)
	return slices.Compact(gone)
}
