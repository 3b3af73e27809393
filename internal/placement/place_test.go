package placement

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// place runs Place, checks every invariant and agreement with the reference
// algorithm, and returns the result.
func place(t *testing.T, in Input) Result {
	t.Helper()
	r := Place(in)
	if err := checkInvariants(in, r); err != nil {
		t.Fatalf("invariant broken: %v\ninput: %s", err, describe(in))
	}
	if ref := referencePlace(in); !reflect.DeepEqual(r, ref) {
		t.Fatalf("Place and the reference disagree\ninput: %s\nPlace:     %+v\nreference: %+v", describe(in), r, ref)
	}
	return r
}

func names(prefix string, n int) []Target {
	targets := make([]Target, n)
	for i := range targets {
		targets[i] = Target{Name: fmt.Sprintf("%s%d", prefix, i+1)}
	}
	return targets
}

func ordinals(n int) []int {
	pods := make([]int, n)
	for i := range pods {
		pods[i] = i
	}
	return pods
}

// sortedLoads is the multiset of loads, for comparisons that do not depend
// on which pod the hash favours.
func sortedLoads(r Result) []int {
	var loads []int
	for _, l := range r.Load {
		loads = append(loads, l)
	}
	slices.Sort(loads)
	return loads
}

func TestPlaceShapes(t *testing.T) {
	tests := []struct {
		name           string
		in             Input
		wantCapacity   int
		wantLoads      []int // sorted; nil when the hash decides the spread
		wantAssigned   int
		wantUnassigned int
		wantMoves      int
	}{
		{
			name:         "gives 10 targets on 3 pods capacity 4",
			in:           Input{Pods: ordinals(3), Targets: names("router", 10)},
			wantCapacity: 4,
			wantAssigned: 10,
		},
		{
			name:         "gives 5 targets on 3 pods capacity 2",
			in:           Input{Pods: ordinals(3), Targets: names("router", 5)},
			wantCapacity: 2,
			wantAssigned: 5,
		},
		{
			name:         "gives 100 targets on 7 pods capacity 15",
			in:           Input{Pods: ordinals(7), Targets: names("router", 100)},
			wantCapacity: 15,
			wantAssigned: 100,
		},
		{
			name:         "places nothing when there are no targets",
			in:           Input{Pods: ordinals(3)},
			wantCapacity: 0,
			wantLoads:    []int{0, 0, 0},
		},
		{
			name:           "leaves every target unassigned when there are no pods",
			in:             Input{Targets: names("r", 4), Current: map[string]int{"r1": 0, "r2": 1}},
			wantCapacity:   0,
			wantUnassigned: 4,
			wantMoves:      2,
		},
		{
			name:           "reports the fixed capacity even with no pods",
			in:             Input{PodCapacity: 5, Targets: names("r", 2)},
			wantCapacity:   5,
			wantUnassigned: 2,
		},
		{
			name:         "puts every target on the only pod",
			in:           Input{Pods: []int{0}, Targets: names("r", 7)},
			wantCapacity: 7,
			wantLoads:    []int{7},
			wantAssigned: 7,
		},
		{
			name:         "fills every pod with one target at capacity 1",
			in:           Input{Pods: ordinals(4), PodCapacity: 1, Targets: names("r", 4)},
			wantCapacity: 1,
			wantLoads:    []int{1, 1, 1, 1},
			wantAssigned: 4,
		},
		{
			name:           "leaves the overflow unassigned when a fixed capacity is too small",
			in:             Input{Pods: ordinals(3), PodCapacity: 2, Targets: names("r", 10)},
			wantCapacity:   2,
			wantLoads:      []int{2, 2, 2},
			wantAssigned:   6,
			wantUnassigned: 4,
		},
		{
			name:         "uses any set of ordinals, not only 0..n-1",
			in:           Input{Pods: []int{42, 3, 7}, Targets: names("r", 9)},
			wantCapacity: 3,
			wantLoads:    []int{3, 3, 3},
			wantAssigned: 9,
		},
		{
			name:         "ignores current entries of deleted targets",
			in:           Input{Pods: ordinals(2), Targets: names("r", 2), Current: map[string]int{"gone": 0, "r1": 1}},
			wantCapacity: 1,
			wantLoads:    []int{1, 1},
			wantAssigned: 2,
		},
		{
			name: "counts weight units against the capacity",
			in: Input{Pods: []int{0}, PodCapacity: 4, Targets: []Target{
				{Name: "a", Weight: 3}, {Name: "b"}, {Name: "c"},
			}},
			wantCapacity:   4,
			wantLoads:      []int{4},
			wantAssigned:   2,
			wantUnassigned: 1,
		},
		{
			name: "widens automatic capacity so that a heavy target still fits",
			in: Input{Pods: ordinals(2), Targets: []Target{
				{Name: "heavy", Weight: 5}, {Name: "a"}, {Name: "b"},
			}},
			wantCapacity: 8,
			wantAssigned: 3,
		},
		{
			name: "assigns every target under automatic capacity even when whole weights pack badly",
			in: Input{Pods: ordinals(2), Targets: []Target{
				{Name: "a", Weight: 2}, {Name: "b", Weight: 2}, {Name: "c", Weight: 2},
			}},
			wantCapacity: 4,
			wantLoads:    []int{2, 4},
			wantAssigned: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := place(t, tt.in)
			if r.Capacity != tt.wantCapacity {
				t.Errorf("capacity %d, want %d", r.Capacity, tt.wantCapacity)
			}
			if got := sortedLoads(r); tt.wantLoads != nil && !slices.Equal(got, tt.wantLoads) {
				t.Errorf("loads %v, want %v", got, tt.wantLoads)
			}
			if len(r.Assignments) != tt.wantAssigned {
				t.Errorf("%d assigned, want %d", len(r.Assignments), tt.wantAssigned)
			}
			if len(r.Unassigned) != tt.wantUnassigned {
				t.Errorf("%d unassigned (%v), want %d", len(r.Unassigned), r.Unassigned, tt.wantUnassigned)
			}
			if len(r.Moves) != tt.wantMoves {
				t.Errorf("%d moves (%v), want %d", len(r.Moves), r.Moves, tt.wantMoves)
			}
		})
	}
}

func TestPlaceLeavesTheAlphabeticallyLastTargetsOutWhenFull(t *testing.T) {
	r := place(t, Input{Pods: ordinals(3), PodCapacity: 2, Targets: names("r", 10)})
	// r1, r10, r2, ... r9 alphabetically: six fit, the last four do not.
	want := []string{"r6", "r7", "r8", "r9"}
	if !slices.Equal(r.Unassigned, want) {
		t.Errorf("unassigned %v, want %v", r.Unassigned, want)
	}
}

func TestPlacePutsAFreshTargetOnItsHighestScoringPod(t *testing.T) {
	pods := []int{0, 1, 2, 5, 9}
	r := place(t, Input{Pods: pods, PodCapacity: 10, Targets: []Target{{Name: "ns/router"}}})
	best := pods[0]
	for _, o := range pods {
		if Score("ns/router", o) > Score("ns/router", best) {
			best = o
		}
	}
	if r.Assignments["ns/router"] != best {
		t.Errorf("assigned to %d, want highest-scoring pod %d", r.Assignments["ns/router"], best)
	}
}

func TestPlaceKeepsATargetOnItsPodWhileThePodIsUnderCapacity(t *testing.T) {
	before := place(t, Input{Pods: ordinals(3), PodCapacity: 5, Targets: names("r", 12)})
	after := place(t, Input{Pods: ordinals(4), PodCapacity: 5, Targets: names("r", 12), Current: before.Assignments})
	if len(after.Moves) != 0 || after.Load[3] != 0 {
		t.Errorf("adding a pod under a fixed capacity moved %v and loaded the new pod with %d", after.Moves, after.Load[3])
	}
	if !reflect.DeepEqual(after.Assignments, before.Assignments) {
		t.Errorf("assignments changed: %v -> %v", before.Assignments, after.Assignments)
	}
}

func TestPlaceMovesOnlyTheTargetsOfAVanishedPod(t *testing.T) {
	before := place(t, Input{Pods: ordinals(3), Targets: names("r", 30)})
	after := place(t, Input{Pods: []int{0, 2}, Targets: names("r", 30), Current: before.Assignments})
	var orphans []string
	for name, o := range before.Assignments {
		if o == 1 {
			orphans = append(orphans, name)
		}
	}
	slices.Sort(orphans)
	var moved []string
	for _, m := range after.Moves {
		if m.From != 1 || m.To == NoPod {
			t.Errorf("unexpected move %+v", m)
		}
		moved = append(moved, m.Target)
	}
	if !slices.Equal(moved, orphans) || after.LowerBoundMoves != len(orphans) {
		t.Errorf("moved %v (lower bound %d), want exactly the orphans %v", moved, after.LowerBoundMoves, orphans)
	}
}

func TestPlaceLeavesOrphansUnassignedWhenSurvivorsAreFull(t *testing.T) {
	before := place(t, Input{Pods: ordinals(3), PodCapacity: 4, Targets: names("r", 12)})
	after := place(t, Input{Pods: ordinals(2), PodCapacity: 4, Targets: names("r", 12), Current: before.Assignments})
	if len(after.Unassigned) != 4 || len(after.Moves) != 4 {
		t.Fatalf("unassigned %v, moves %v: want the 4 targets of pod 2", after.Unassigned, after.Moves)
	}
	for _, m := range after.Moves {
		if m.From != 2 || m.To != NoPod {
			t.Errorf("move %+v, want from 2 to nowhere", m)
		}
	}
}

func TestPlaceShedsTheLowestScoringTargetsOfAnOverCapacityPod(t *testing.T) {
	targets := names("r", 6)
	current := map[string]int{}
	for _, tg := range targets {
		current[tg.Name] = 0
	}
	r := place(t, Input{Pods: ordinals(3), Targets: targets, Current: current})

	byScore := make([]string, 0, len(targets))
	for _, tg := range targets {
		byScore = append(byScore, tg.Name)
	}
	slices.SortFunc(byScore, func(a, b string) int {
		if Score(a, 0) > Score(b, 0) {
			return -1
		}
		return 1
	})
	for i, name := range byScore {
		if stays := r.Assignments[name] == 0; stays != (i < 2) {
			t.Errorf("%q (rank %d on pod 0) stays=%v", name, i, stays)
		}
	}
	if len(r.Moves) != 4 || r.LowerBoundMoves != 4 {
		t.Errorf("%d moves, lower bound %d, want 4 and 4", len(r.Moves), r.LowerBoundMoves)
	}
}

func TestPlaceReachesTheLowerBoundWhenAPodIsAdded(t *testing.T) {
	before := place(t, Input{Pods: ordinals(3), Targets: names("router", 10)})
	after := place(t, Input{Pods: ordinals(4), Targets: names("router", 10), Current: before.Assignments})
	if after.Capacity != 3 {
		t.Fatalf("capacity %d, want 3", after.Capacity)
	}
	want := 0
	for _, l := range before.Load {
		want += max(0, l-3)
	}
	if len(after.Moves) != want || after.LowerBoundMoves != want {
		t.Errorf("%d moves, lower bound %d, want %d", len(after.Moves), after.LowerBoundMoves, want)
	}
	for _, m := range after.Moves {
		if before.Load[m.From] <= 3 {
			t.Errorf("move %+v leaves a pod that was within the new capacity", m)
		}
	}
}

func TestPlaceReportsATargetHeavierThanAFixedCapacityAsOversized(t *testing.T) {
	r := place(t, Input{Pods: ordinals(3), PodCapacity: 4, Targets: []Target{
		{Name: "big", Weight: 5}, {Name: "small", Weight: 4},
	}, Current: map[string]int{"big": 1}})
	if !slices.Equal(r.Oversized, []string{"big"}) || !slices.Equal(r.Unassigned, []string{"big"}) {
		t.Errorf("oversized %v, unassigned %v, want [big] and [big]", r.Oversized, r.Unassigned)
	}
	if want := []Move{{Target: "big", From: 1, To: NoPod}}; !slices.Equal(r.Moves, want) || r.LowerBoundMoves != 1 {
		t.Errorf("moves %v (lower bound %d), want %v", r.Moves, r.LowerBoundMoves, want)
	}
}

func TestPlaceTreatsWeightZeroAsOne(t *testing.T) {
	zero := place(t, Input{Pods: ordinals(3), Targets: names("r", 20)})
	ones := names("r", 20)
	for i := range ones {
		ones[i].Weight = 1
	}
	if one := place(t, Input{Pods: ordinals(3), Targets: ones}); !reflect.DeepEqual(zero, one) {
		t.Errorf("weight 0 and weight 1 differ:\n%+v\n%+v", zero, one)
	}
}

func TestPlaceKeepsAsManyCurrentTargetsAsFitInScoreOrder(t *testing.T) {
	// Pod 0 holds 10 units of 3 targets at capacity 7; whichever order the
	// scores give, it keeps each target that still fits, best score first.
	targets := []Target{{Name: "a", Weight: 6}, {Name: "b", Weight: 3}, {Name: "c", Weight: 1}}
	current := map[string]int{"a": 0, "b": 0, "c": 0}
	r := place(t, Input{Pods: ordinals(2), PodCapacity: 7, Targets: targets, Current: current})
	if r.Load[0] > 7 || r.LowerBoundMoves != 1 {
		t.Errorf("pod 0 load %d, lower bound %d, want <= 7 and 1 (removing a alone suffices)", r.Load[0], r.LowerBoundMoves)
	}
}

func TestPlaceReadsInvalidInputLeniently(t *testing.T) {
	lenient := Input{
		Pods:        []int{-1, 1, 0, 1},
		PodCapacity: -3,
		Targets:     []Target{{Name: "a", Weight: -2}, {Name: "b", Weight: 2}, {Name: "b"}, {Name: "c", Weight: MaxWeight + 1}},
		Current:     map[string]int{"a": -4, "b": 1},
	}
	clean := Input{
		Pods:    []int{0, 1},
		Targets: []Target{{Name: "a"}, {Name: "b", Weight: 2}, {Name: "c", Weight: MaxWeight}},
		Current: map[string]int{"b": 1},
	}
	if lenient.Validate() == nil {
		t.Fatal("Validate accepted the lenient input")
	}
	if got, want := place(t, lenient), place(t, clean); !reflect.DeepEqual(got, want) {
		t.Errorf("lenient input placed as %+v, want %+v", got, want)
	}
}

func TestBestBreaksEqualScoresByTheLowerOrdinal(t *testing.T) {
	key := podKey(7)
	for _, minRoom := range []int{0, 1} { // 1 takes the path that checks no room
		open := openPods{keys: []uint64{key, key, key}, pods: []int32{0, 1, 2}, room: []int{1, 1, 1}, minRoom: minRoom}
		if got := open.best(42, 1); got != 0 {
			t.Errorf("minRoom %d: best of equal scores is position %d, want 0 (the lowest ordinal)", minRoom, got)
		}
	}
	open := openPods{keys: []uint64{key, key, key}, pods: []int32{0, 1, 2}, room: []int{0, 1, 1}}
	if got := open.best(42, 1); got != 1 {
		t.Errorf("best of equal scores with the first full is position %d, want 1", got)
	}
}

func TestRankOrderBreaksEqualScoresByName(t *testing.T) {
	p := &planner{
		targets: []Target{{Name: "c"}, {Name: "a"}, {Name: "b"}},
		entries: []entry{{hash: 9}, {hash: 9}, {hash: 9}},
	}
	ranked := p.rankFor(nil, []int32{0, 1, 2}, podKey(0))
	slices.SortFunc(ranked, p.rankOrder)
	got := []int32{ranked[0].entry, ranked[1].entry, ranked[2].entry}
	if !slices.Equal(got, []int32{1, 2, 0}) {
		t.Errorf("equal scores ranked %v, want by name a, b, c: [1 2 0]", got)
	}
}
