package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSelectBestKeepsTheKBestInRankOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	p := &planner{}
	for i := range 300 {
		p.targets = append(p.targets, Target{Name: fmt.Sprintf("t%03d", i)})
	}
	for round := range 2000 {
		n := rng.IntN(300)
		ranked := make([]rankedEntry, n)
		for i := range ranked {
			// Few distinct scores, so that ties are common.
			ranked[i] = rankedEntry{score: uint64(rng.IntN(1 + round%50)), entry: int32(i)}
		}
		rng.Shuffle(n, func(i, j int) { ranked[i], ranked[j] = ranked[j], ranked[i] })
		k := rng.IntN(n + 1)
		want := slices.Clone(ranked)
		slices.SortFunc(want, p.rankOrder)

		selectBest(ranked, k, p.rankOrder)
		got := slices.Clone(ranked[:k])
		slices.SortFunc(got, p.rankOrder)
		if !slices.Equal(got, want[:k]) {
			t.Fatalf("round %d: n=%d k=%d: selected %v, want %v", round, n, k, got, want[:k])
		}
		rest := slices.Clone(ranked[k:])
		slices.SortFunc(rest, p.rankOrder)
		if !slices.Equal(rest, want[k:]) {
			t.Fatalf("round %d: the items after the k best were changed", round)
		}
	}
}
