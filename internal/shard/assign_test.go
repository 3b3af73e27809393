package shard

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/placement"
)

// assign runs Assign, checks every guarantee of an Assignment and returns it.
func assign(t *testing.T, in AssignInput) Assignment {
	t.Helper()
	a := Assign(in)
	if err := checkAssignment(in, a); err != nil {
		t.Fatalf("%v\ninput: %+v\nassignment: %+v", err, in, a)
	}
	return a
}

// checkAssignment returns the first guarantee a breaks for in, or nil.
func checkAssignment(in AssignInput, a Assignment) error {
	live := map[string]bool{}
	for _, m := range in.Members {
		if m != "" {
			live[m] = true
		}
	}
	costs := map[string]int{}
	for _, c := range in.Clusters {
		costs[c.Key] = max(costs[c.Key], min(max(c.Cost, 1), placement.MaxWeight))
	}
	if len(a.Load) != len(live) {
		return fmt.Errorf("load of %d members, want %d", len(a.Load), len(live))
	}
	load := map[string]int{}
	for key, owner := range a.Owners {
		if _, ok := costs[key]; !ok {
			return fmt.Errorf("owner for unknown cluster %q", key)
		}
		if !live[owner] {
			return fmt.Errorf("cluster %q given to %q, not a member", key, owner)
		}
		load[owner] += costs[key]
	}
	for m := range live {
		if a.Load[m] != load[m] {
			return fmt.Errorf("load of %q is %d, its clusters cost %d", m, a.Load[m], load[m])
		}
		if a.Load[m] > a.Capacity {
			return fmt.Errorf("load of %q is %d, above capacity %d", m, a.Load[m], a.Capacity)
		}
	}
	if len(live) > 0 && len(a.Unassigned) > 0 {
		return fmt.Errorf("clusters unassigned although there are members: %v", a.Unassigned)
	}
	if len(a.Owners)+len(a.Unassigned) != len(costs) || !slices.IsSorted(a.Unassigned) {
		return fmt.Errorf("%d owned and %d unassigned (%v) of %d clusters", len(a.Owners), len(a.Unassigned), a.Unassigned, len(costs))
	}
	var moves []Move
	for key := range costs {
		if from := in.Owners[key]; from != "" && from != a.Owners[key] {
			moves = append(moves, Move{Cluster: key, From: from, To: a.Owners[key]})
		}
	}
	slices.SortFunc(moves, func(x, y Move) int { return strings.Compare(x.Cluster, y.Cluster) })
	if !reflect.DeepEqual(moves, a.Moves) && len(moves)+len(a.Moves) > 0 {
		return fmt.Errorf("moves %v, want %v", a.Moves, moves)
	}
	if len(a.Moves) < a.LowerBoundMoves {
		return fmt.Errorf("%d moves, below the lower bound %d", len(a.Moves), a.LowerBoundMoves)
	}
	return nil
}

func keys(prefix string, n, cost int) []Cluster {
	clusters := make([]Cluster, n)
	for i := range clusters {
		clusters[i] = Cluster{Key: fmt.Sprintf("%s/c%d", prefix, i), Cost: cost}
	}
	return clusters
}

func TestAssignShapes(t *testing.T) {
	tests := []struct {
		name           string
		in             AssignInput
		wantLoads      map[string]int // nil when the hash decides
		wantMoves      []Move
		wantUnassigned []string
	}{
		{
			name:           "leaves every cluster unassigned without members",
			in:             AssignInput{Clusters: keys("ns", 3, 5), Owners: map[string]string{"ns/c1": "gone"}},
			wantLoads:      map[string]int{},
			wantMoves:      []Move{{Cluster: "ns/c1", From: "gone"}},
			wantUnassigned: []string{"ns/c0", "ns/c1", "ns/c2"},
		},
		{
			name:      "gives every cluster to the only member",
			in:        AssignInput{Members: []string{"a"}, Clusters: keys("ns", 4, 3)},
			wantLoads: map[string]int{"a": 12},
		},
		{
			name: "keeps clusters with their owners while they have room",
			in: AssignInput{Members: []string{"a", "b"}, Clusters: keys("ns", 4, 1),
				Owners: map[string]string{"ns/c0": "a", "ns/c1": "a", "ns/c2": "b", "ns/c3": "b"}},
			wantLoads: map[string]int{"a": 2, "b": 2},
		},
		{
			name: "moves the clusters of a gone owner and only those",
			in: AssignInput{Members: []string{"a", "b"}, Clusters: keys("ns", 3, 1),
				Owners: map[string]string{"ns/c0": "a", "ns/c1": "b", "ns/c2": "gone"}},
		},
		{
			name: "sheds from an owner over capacity",
			in: AssignInput{Members: []string{"a", "b"}, Clusters: keys("ns", 4, 1),
				Owners: map[string]string{"ns/c0": "a", "ns/c1": "a", "ns/c2": "a", "ns/c3": "a"}},
			wantLoads: map[string]int{"a": 2, "b": 2},
		},
		{
			name:      "ignores empty and repeated members",
			in:        AssignInput{Members: []string{"a", "", "a"}, Clusters: keys("ns", 2, 1)},
			wantLoads: map[string]int{"a": 2},
		},
		{
			name: "counts costs below 1 as 1 and caps those above the maximum",
			in: AssignInput{Members: []string{"a"}, Clusters: []Cluster{
				{Key: "ns/zero", Cost: 0}, {Key: "ns/negative", Cost: -4}, {Key: "ns/huge", Cost: placement.MaxWeight + 7},
			}},
			wantLoads: map[string]int{"a": placement.MaxWeight + 2},
		},
		{
			name:      "counts a cluster given twice once with its larger cost",
			in:        AssignInput{Members: []string{"a"}, Clusters: []Cluster{{Key: "ns/c", Cost: 3}, {Key: "ns/c", Cost: 8}}},
			wantLoads: map[string]int{"a": 8},
		},
		{
			name: "ignores owners of deleted clusters",
			in: AssignInput{Members: []string{"a"}, Clusters: keys("ns", 1, 1),
				Owners: map[string]string{"ns/deleted": "gone", "ns/c0": ""}},
			wantLoads: map[string]int{"a": 1},
		},
		{
			name:      "gives members whose hashes collide clusters of their own",
			in:        AssignInput{Members: colliding[:], Clusters: keys("ns", 10, 1)},
			wantLoads: map[string]int{colliding[0]: 5, colliding[1]: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := assign(t, tt.in)
			if tt.wantLoads != nil && !reflect.DeepEqual(a.Load, tt.wantLoads) {
				t.Errorf("loads %v, want %v", a.Load, tt.wantLoads)
			}
			if tt.wantMoves != nil && !reflect.DeepEqual(a.Moves, tt.wantMoves) {
				t.Errorf("moves %v, want %v", a.Moves, tt.wantMoves)
			}
			if want := tt.wantUnassigned; want == nil && len(a.Unassigned) > 0 || want != nil && !reflect.DeepEqual(a.Unassigned, want) {
				t.Errorf("unassigned %v, want %v", a.Unassigned, want)
			}
		})
	}
}

// assignGenerator makes random AssignInputs from a fixed seed.
type assignGenerator struct {
	rng      *rand.Rand
	weighted bool
}

func newAssignGenerator(seed uint64, weighted bool) *assignGenerator {
	return &assignGenerator{rng: rand.New(rand.NewPCG(seed, 0xA551)), weighted: weighted}
}

func (g *assignGenerator) input() AssignInput {
	in := AssignInput{Owners: map[string]string{}}
	pool := []string{"m0", "m1", "m2", "m3", "m4", "m5", colliding[0], colliding[1], "gone0", "gone1"}
	for _, m := range pool[:8] {
		if g.rng.IntN(2) == 0 {
			in.Members = append(in.Members, m)
		}
	}
	for i := range g.rng.IntN(50) {
		c := Cluster{Key: fmt.Sprintf("ns%d/c%d", g.rng.IntN(3), i), Cost: 1}
		if g.weighted {
			c.Cost = g.rng.IntN(30)
		}
		in.Clusters = append(in.Clusters, c)
		if g.rng.IntN(10) < 7 {
			in.Owners[c.Key] = pool[g.rng.IntN(len(pool))]
		}
	}
	return in
}

func (g *assignGenerator) shuffled(in AssignInput) AssignInput {
	out := AssignInput{Members: slices.Clone(in.Members), Clusters: slices.Clone(in.Clusters), Owners: map[string]string{}}
	g.rng.Shuffle(len(out.Members), func(i, j int) { out.Members[i], out.Members[j] = out.Members[j], out.Members[i] })
	g.rng.Shuffle(len(out.Clusters), func(i, j int) { out.Clusters[i], out.Clusters[j] = out.Clusters[j], out.Clusters[i] })
	for k, v := range in.Owners {
		out.Owners[k] = v
	}
	return out
}

func TestAssignKeepsEveryGuarantee(t *testing.T) {
	for _, weighted := range []bool{false, true} {
		g := newAssignGenerator(1, weighted)
		for range 2000 {
			in := g.input()
			a := assign(t, in)
			if !weighted && len(a.Moves) != a.LowerBoundMoves {
				t.Fatalf("unit costs: %d moves, lower bound %d\ninput: %+v", len(a.Moves), a.LowerBoundMoves, in)
			}
		}
	}
}

func TestAssignGivesTheSameAssignmentForTheSameInputInAnyOrder(t *testing.T) {
	g := newAssignGenerator(2, true)
	for range 1000 {
		in := g.input()
		want := Assign(in)
		for range 3 {
			if got := Assign(g.shuffled(in)); !reflect.DeepEqual(got, want) {
				t.Fatalf("reordered input assigned differently\ninput: %+v\ngot:  %+v\nwant: %+v", in, got, want)
			}
		}
	}
}

func TestAssignMovesNothingWhenFedItsOwnOwners(t *testing.T) {
	g := newAssignGenerator(3, true)
	for range 1000 {
		in := g.input()
		first := Assign(in)
		in.Owners = first.Owners
		if again := assign(t, in); len(again.Moves) != 0 || !reflect.DeepEqual(again.Owners, first.Owners) {
			t.Fatalf("assigning an assignment again changed it: %v\ninput: %+v", again.Moves, in)
		}
	}
}

// TestAssignMovesAClusterOnlyOffAMemberThatIsGoneOrOverCapacity: a Cluster
// whose owner is a member with room for all its recorded Clusters stays.
func TestAssignMovesAClusterOnlyOffAMemberThatIsGoneOrOverCapacity(t *testing.T) {
	g := newAssignGenerator(4, true)
	for range 2000 {
		in := g.input()
		a := assign(t, in)
		recorded := map[string]int{}
		for _, c := range in.Clusters {
			if owner := in.Owners[c.Key]; owner != "" {
				recorded[owner] += min(max(c.Cost, 1), placement.MaxWeight)
			}
		}
		for _, m := range a.Moves {
			if _, live := a.Load[m.From]; live && recorded[m.From] <= a.Capacity {
				t.Fatalf("%s moved off %s, a member with room (%d of %d)\ninput: %+v", m.Cluster, m.From, recorded[m.From], a.Capacity, in)
			}
		}
	}
}

func TestAssignMovesOnlyWhatTheLowerBoundRequiresWhenAMemberJoins(t *testing.T) {
	for seed := range 100 {
		f := newFleet(uint64(seed))
		members := f.members(4)
		clusters := keys("ns", 20+f.rng.IntN(300), 1)
		three := assign(t, AssignInput{Members: members[:3], Clusters: clusters})
		four := assign(t, AssignInput{Members: members, Clusters: clusters, Owners: three.Owners})
		excess := 0
		for _, m := range members[:3] {
			excess += max(0, three.Load[m]-four.Capacity)
		}
		if len(four.Moves) != four.LowerBoundMoves || len(four.Moves) != excess {
			t.Fatalf("%d clusters: %d moves, lower bound %d, excess over the new capacity %d", len(clusters), len(four.Moves), four.LowerBoundMoves, excess)
		}
	}
}

func TestAssignMovesOnlyTheClustersOfAMemberThatLeaves(t *testing.T) {
	for seed := range 100 {
		f := newFleet(uint64(seed))
		members := f.members(4)
		clusters := keys("ns", 20+f.rng.IntN(300), 1)
		if seed%2 == 1 {
			clusters = f.clusters(len(clusters), 200)
		}
		four := assign(t, AssignInput{Members: members, Clusters: clusters})
		leaving := members[f.rng.IntN(4)]
		rest := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == leaving })
		three := assign(t, AssignInput{Members: rest, Clusters: clusters, Owners: four.Owners})
		owned := 0
		for _, owner := range four.Owners {
			if owner == leaving {
				owned++
			}
		}
		if len(three.Moves) != owned {
			t.Fatalf("%s owned %d clusters, %d moved", leaving, owned, len(three.Moves))
		}
		for _, m := range three.Moves {
			if m.From != leaving {
				t.Fatalf("%s moved off %s, which stays", m.Cluster, m.From)
			}
		}
	}
}
