package shard

import "testing"

// BenchmarkAssign assigns 300 Clusters of cost 1 to 200 on 3 members, kept
// from a previous assignment, as every member does on every resync.
func BenchmarkAssign(b *testing.B) {
	f := newFleet(1)
	in := AssignInput{Members: f.members(3), Clusters: f.clusters(300, 200)}
	in.Owners = Assign(in).Owners
	b.ReportAllocs()
	for b.Loop() {
		Assign(in)
	}
}

// BenchmarkDecide decides one Cluster for one member.
func BenchmarkDecide(b *testing.B) {
	v := View{Self: renewed("b", 0), Cluster: ClusterState{Owner: "a", Generation: 3}, Desired: "b", Owner: renewed("a", 0)}
	now := t0.Add(leaseDuration / 2)
	for b.Loop() {
		Decide(v, now)
	}
}
