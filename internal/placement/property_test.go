package placement

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// generator makes random inputs of a given kind from a fixed seed, so that
// every run checks the same cases.
type generator struct {
	rng      *rand.Rand
	weighted bool // weights from 0 to 4 instead of all 1
	lenient  bool // also input that Validate rejects
	lasts    bool // some targets have a last pod
}

func newGenerator(seed uint64, weighted, lenient bool) *generator {
	return &generator{rng: rand.New(rand.NewPCG(seed, 0x9E3779B97F4A7C15)), weighted: weighted, lenient: lenient}
}

func (g *generator) input() Input {
	in := Input{Pods: g.pods(), Current: map[string]int{}}
	if g.rng.IntN(2) == 0 {
		in.PodCapacity = 1 + g.rng.IntN(8)
	}
	if g.lenient && g.rng.IntN(4) == 0 {
		in.PodCapacity = -g.rng.IntN(3)
	}
	n := g.rng.IntN(60)
	for i := range n {
		t := Target{Name: fmt.Sprintf("ns%d/t%d", g.rng.IntN(3), i)}
		if g.weighted {
			t.Weight = g.rng.IntN(5)
		}
		if g.lenient && g.rng.IntN(8) == 0 {
			t.Name = fmt.Sprintf("ns0/t%d", g.rng.IntN(n))
			t.Weight = g.rng.IntN(7) - 2
		}
		in.Targets = append(in.Targets, t)
		if g.rng.IntN(10) < 7 {
			in.Current[t.Name] = g.rng.IntN(14)
			if g.lenient && g.rng.IntN(10) == 0 {
				in.Current[t.Name] = -1 - g.rng.IntN(3)
			}
		}
	}
	if g.rng.IntN(4) == 0 {
		in.Current["deleted"] = g.rng.IntN(4)
	}
	if g.lasts {
		g.addLasts(&in)
	}
	return in
}

// addLasts gives about a third of the targets a last pod, sometimes their
// current one (which Place ignores) or, in lenient mode, a negative one.
func (g *generator) addLasts(in *Input) {
	in.Last = map[string]int{}
	for _, t := range in.Targets {
		if g.rng.IntN(3) > 0 {
			continue
		}
		in.Last[t.Name] = g.rng.IntN(14)
		if o, ok := in.Current[t.Name]; ok && g.rng.IntN(6) == 0 {
			in.Last[t.Name] = o
		}
		if g.lenient && g.rng.IntN(10) == 0 {
			in.Last[t.Name] = -1
		}
	}
	if g.rng.IntN(4) == 0 {
		in.Last["deleted"] = g.rng.IntN(4)
	}
}

// pods is usually 0..n-1, sometimes any subset of 0..13.
func (g *generator) pods() []int {
	if g.rng.IntN(3) > 0 {
		return ordinals(g.rng.IntN(13))
	}
	var pods []int
	for o := range 14 {
		if g.rng.IntN(2) == 0 {
			pods = append(pods, o)
		}
	}
	if g.lenient && g.rng.IntN(3) == 0 {
		pods = append(pods, -1, 2, 2)
	}
	return pods
}

// shuffled is the same input in another order, with its map built anew.
func (g *generator) shuffled(in Input) Input {
	out := Input{PodCapacity: in.PodCapacity, Current: map[string]int{}}
	if in.Last != nil {
		out.Last = map[string]int{}
		for _, name := range slices.Collect(maps.Keys(in.Last)) {
			out.Last[name] = in.Last[name]
		}
	}
	out.Pods = append(out.Pods, in.Pods...)
	out.Targets = append(out.Targets, in.Targets...)
	g.rng.Shuffle(len(out.Pods), func(i, j int) { out.Pods[i], out.Pods[j] = out.Pods[j], out.Pods[i] })
	g.rng.Shuffle(len(out.Targets), func(i, j int) { out.Targets[i], out.Targets[j] = out.Targets[j], out.Targets[i] })
	for _, t := range out.Targets {
		if o, ok := in.Current[t.Name]; ok {
			out.Current[t.Name] = o
		}
	}
	for name, o := range in.Current {
		out.Current[name] = o
	}
	return out
}

func TestPlaceAgreesWithTheReferenceAndKeepsEveryGuarantee(t *testing.T) {
	kinds := []struct {
		name                     string
		weighted, lenient, lasts bool
	}{
		{"weight 1", false, false, false},
		{"weighted", true, false, false},
		{"lenient", true, true, false},
		{"weight 1 with last pods", false, false, true},
		{"weighted with last pods", true, false, true},
		{"lenient with last pods", true, true, true},
	}
	for k, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			g := newGenerator(uint64(k)+1, kind.weighted, kind.lenient)
			g.lasts = kind.lasts
			for range 3000 {
				place(t, g.input())
			}
		})
	}
}

func TestPlaceGivesTheSameResultForTheSameInputInAnyOrder(t *testing.T) {
	g := newGenerator(11, true, true)
	for i := range 4000 {
		g.lasts = i%2 == 1
		in := g.input()
		want := Place(in)
		for range 3 {
			if got := Place(g.shuffled(in)); !reflect.DeepEqual(got, want) {
				t.Fatalf("reordered input placed differently\ninput: %s\ngot:  %+v\nwant: %+v", describe(in), got, want)
			}
		}
	}
}

func TestPlaceMovesNothingWhenFedItsOwnResult(t *testing.T) {
	g := newGenerator(12, true, false)
	for range 2000 {
		in := g.input()
		first := Place(in)
		in.Current = first.Assignments
		again := place(t, in)
		if len(again.Moves) != 0 || !reflect.DeepEqual(again.Assignments, first.Assignments) {
			t.Fatalf("placing a result again changed it\ninput: %s\nmoves: %v", describe(in), again.Moves)
		}
	}
}

// TestPlaceKeepsEveryGuaranteeAcrossScaleSequences feeds each result back as
// the next current assignment while pods come and go and targets are added
// and deleted, as a reconciler does.
func TestPlaceKeepsEveryGuaranteeAcrossScaleSequences(t *testing.T) {
	for seq := range 200 {
		g := newGenerator(uint64(1000+seq), seq%2 == 1, false)
		in := g.input()
		for range 25 {
			r := place(t, in)
			in.Current = r.Assignments
			g.step(&in)
		}
	}
}

// step changes one thing, as happens between two reconciles.
func (g *generator) step(in *Input) {
	switch g.rng.IntN(5) {
	case 0: // scale up
		in.Pods = append(in.Pods, nextOrdinal(in.Pods))
	case 1: // scale down: the highest ordinal goes
		if len(in.Pods) > 0 {
			in.Pods = dropOrdinal(in.Pods, nextOrdinal(in.Pods)-1)
		}
	case 2: // a pod becomes unready
		if len(in.Pods) > 0 {
			in.Pods = dropOrdinal(in.Pods, in.Pods[g.rng.IntN(len(in.Pods))])
		}
	case 3: // a target is added
		in.Targets = append(in.Targets, Target{Name: fmt.Sprintf("new/t%d", g.rng.Uint32())})
	case 4: // a target is deleted
		if len(in.Targets) > 0 {
			i := g.rng.IntN(len(in.Targets))
			in.Targets = append(in.Targets[:i:i], in.Targets[i+1:]...)
		}
	}
}

func nextOrdinal(pods []int) int {
	next := 0
	for _, o := range pods {
		next = max(next, o+1)
	}
	return next
}

func dropOrdinal(pods []int, ordinal int) []int {
	out := make([]int, 0, len(pods))
	for _, o := range pods {
		if o != ordinal {
			out = append(out, o)
		}
	}
	return out
}

// TestLowerBoundIsTheFewestMovesOfAnyPlacement tries every placement of small
// inputs, leaving targets out included, and checks that none within capacity
// moves fewer targets than LowerBoundMoves, and that one moves exactly that
// many.
func TestLowerBoundIsTheFewestMovesOfAnyPlacement(t *testing.T) {
	g := newGenerator(13, true, false)
	for range 400 {
		in := g.input()
		in.Pods = ordinals(1 + g.rng.IntN(3))
		if len(in.Targets) > 6 {
			in.Targets = in.Targets[:6]
		}
		r := place(t, in)
		if fewest := fewestMovesByExhaustion(in, r.Capacity); fewest != r.LowerBoundMoves {
			t.Fatalf("lower bound %d, fewest possible moves %d\ninput: %s", r.LowerBoundMoves, fewest, describe(in))
		}
	}
}

// fewestMovesByExhaustion tries all (pods+1)^targets placements.
func fewestMovesByExhaustion(in Input, capacity int) int {
	n := normalize(in)
	choices := append([]int{NoPod}, n.pods...)
	placement := make([]int, len(n.names))
	fewest := len(n.names) + 1
	var try func(i int)
	try = func(i int) {
		if i == len(n.names) {
			load := map[int]int{}
			moves := 0
			for j, name := range n.names {
				if placement[j] != NoPod {
					load[placement[j]] += n.weights[name]
				}
				if from, ok := n.current[name]; ok && from != placement[j] {
					moves++
				}
			}
			for _, l := range load {
				if l > capacity {
					return
				}
			}
			fewest = min(fewest, moves)
			return
		}
		for _, c := range choices {
			placement[i] = c
			try(i + 1)
		}
	}
	try(0)
	return fewest
}

// TestPlaceAgreesWithTheReferenceWhenCrowdedPodsShed covers pods that hold
// hundreds of current targets and must shed many of them.
func TestPlaceAgreesWithTheReferenceWhenCrowdedPodsShed(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	for round := range 60 {
		in := Input{Pods: ordinals(1 + rng.IntN(4)), Current: map[string]int{}}
		if round%2 == 0 {
			in.PodCapacity = 1 + rng.IntN(150)
		}
		for i := range 100 + rng.IntN(400) {
			name := fmt.Sprintf("crowd/t%d", i)
			weight := 0
			if round%3 == 0 {
				weight = 1 + rng.IntN(3)
			}
			in.Targets = append(in.Targets, Target{Name: name, Weight: weight})
			in.Current[name] = rng.IntN(2)
		}
		place(t, in)
	}
}
