package clusterplacement

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

func TestWeighReadsDeclaredWeightsOnlyWhenTheClusterWeighsByDeclared(t *testing.T) {
	target := func(name string, weight int32) selection.SelectedTarget {
		return selection.SelectedTarget{Target: &v1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.TargetSpec{Weight: weight}}}
	}
	sel := selection.Selection{Targets: []selection.SelectedTarget{target("spine", 40), target("leaf", 1), target("unset", 0)}}
	tests := []struct {
		weighBy string
		want    Weights
	}{
		{weighBy: "", want: Weights{}},
		{weighBy: v1alpha1.WeighByCount, want: Weights{}},
		{weighBy: v1alpha1.WeighByDeclared, want: Weights{Fill: placement.FillByWeight,
			Of:     map[string]int{"spine": 40, "leaf": 1, "unset": 1},
			Source: map[string]string{"spine": "Declared", "leaf": "Declared", "unset": "Declared"}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("weighBy %q", tt.weighBy), func(t *testing.T) {
			c := &v1alpha1.Cluster{Spec: v1alpha1.ClusterSpec{TargetDistribution: v1alpha1.TargetDistribution{WeighBy: tt.weighBy}}}
			got := Weigh(c, sel)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Weigh = %+v, want %+v", got, tt.want)
			}
			units := 3
			if tt.want.Weighed() {
				units = 42
			}
			if u := got.Units([]string{"spine", "leaf", "unset"}); u != units {
				t.Errorf("units %d, want %d", u, units)
			}
		})
	}
}

func TestWeightsByCountWeighEveryTargetOne(t *testing.T) {
	var w Weights
	if w.Weighed() || w.Weight("anything") != 1 || w.Units([]string{"a", "b", "c"}) != 3 || w.Units(nil) != 0 {
		t.Fatalf("zero Weights: weighed %v, weight %d, units %d", w.Weighed(), w.Weight("anything"), w.Units([]string{"a", "b", "c"}))
	}
}

// A Cluster whose targets all declare weight 1 places exactly as a Cluster that counts them: same capacity,
// same pods, same moves, same last pods, for any fleet.
func TestPlaceByDeclaredWeightsOfOneIsPlaceByCount(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 7))
	for i := range 3000 {
		f := randomFleet(r)
		byCount := Place(f)
		f.Weights = Weights{Fill: placement.FillByWeight, Of: map[string]int{}, Source: map[string]string{}}
		for _, name := range f.Placeable {
			f.Weights.Of[name] = 1
		}
		byWeight := Place(f)
		if !reflect.DeepEqual(byCount.Result, byWeight.Result) || !reflect.DeepEqual(byCount.Held, byWeight.Held) ||
			!reflect.DeepEqual(byCount.Last, byWeight.Last) {
			t.Fatalf("fleet %d %+v:\nby count  %+v\nby weight %+v", i, f, byCount, byWeight)
		}
	}
}

// Placing by declared weights gives placement every target's weight and fills by weight: no ready pod's load
// in units exceeds the capacity, every target placed or unassigned, and moves at the lower bound.
func TestPlaceByDeclaredWeightsKeepsEveryPodWithinCapacityInUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 11))
	for i := range 3000 {
		f := randomFleet(r)
		f.Weights = Weights{Fill: placement.FillByWeight, Of: map[string]int{}, Source: map[string]string{}}
		for _, name := range f.Placeable {
			f.Weights.Of[name] = 1 << r.IntN(5)
		}
		f.Last = map[string]int{} // moves are at the lower bound when no target is away from its last pod
		p := Place(f)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("fleet %d %+v: %s", i, f, fmt.Sprintf(format, args...))
		}
		if p.Input.Fill != placement.FillByWeight {
			fail("placement filled by %v", p.Input.Fill)
		}
		for _, target := range p.Input.Targets {
			if target.Weight != f.Weights.Of[target.Name] {
				fail("%s given weight %d, declared %d", target.Name, target.Weight, f.Weights.Of[target.Name])
			}
		}
		load := map[int]int{}
		for name, o := range p.Result.Assignments {
			load[o] += f.Weights.Weight(name)
		}
		for o, units := range load {
			if units > p.Result.Capacity || units != p.Result.Load[o] {
				fail("pod %d holds %d units, result says %d, capacity %d", o, units, p.Result.Load[o], p.Result.Capacity)
			}
		}
		if len(p.Result.Assignments)+len(p.Result.Unassigned) != len(p.Input.Targets) {
			fail("%d assigned + %d unassigned of %d targets", len(p.Result.Assignments), len(p.Result.Unassigned), len(p.Input.Targets))
		}
		if len(p.Result.Moves) != p.Result.LowerBoundMoves {
			fail("%d moves, lower bound %d", len(p.Result.Moves), p.Result.LowerBoundMoves)
		}
	}
}
