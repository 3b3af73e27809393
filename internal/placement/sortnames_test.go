package placement

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestSortByNameSortsLikeStringComparison(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	alphabets := []string{"ab", "a\x00b", "xyz/-0123456789", "\x00\xff"}
	for round := range 300 {
		alphabet := alphabets[round%len(alphabets)]
		n := rng.IntN(3000)
		targets := make([]Target, n)
		for i := range targets {
			var b strings.Builder
			if rng.IntN(2) == 0 {
				b.WriteString("telemetry-production/") // a shared prefix longer than a digit
			}
			for range rng.IntN(26) {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
			targets[i] = Target{Name: b.String()}
		}
		indexes := make([]int32, n)
		for i := range indexes {
			indexes[i] = int32(i)
		}
		sortByName(indexes, targets)
		got := indexes
		want := slices.Clone(targets)
		slices.SortStableFunc(want, func(a, b Target) int { return strings.Compare(a.Name, b.Name) })
		if len(got) != len(want) {
			t.Fatalf("sorted %d targets into %d", len(want), len(got))
		}
		seen := map[int32]bool{}
		for i := range want {
			if name := targets[got[i]].Name; name != want[i].Name {
				t.Fatalf("round %d: position %d holds %q, want %q", round, i, name, want[i].Name)
			}
			seen[got[i]] = true
		}
		if len(seen) != n {
			t.Fatalf("round %d: targets were lost or duplicated while sorting", round)
		}
	}
}
