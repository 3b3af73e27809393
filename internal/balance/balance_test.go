package balance

import (
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
)

// balance runs Balance on valid input, checks every invariant, agreement
// with the reference and that the base is the result without fallback, and
// returns the result.
func balance(t *testing.T, in Input) Result {
	t.Helper()
	r, err := Balance(in)
	if err != nil {
		t.Fatalf("Balance: %v\ninput: %s", err, describe(in))
	}
	if err := checkInvariants(in, r); err != nil {
		t.Fatalf("invariant broken: %v\ninput: %s\nresult: %+v", err, describe(in), r)
	}
	if in.Policy == Priority && in.Replicas <= 10_000 {
		wantBase, wantDesired := referencePriority(in)
		if base, desired := counts(r, true), counts(r, false); !maps.Equal(base, wantBase) || !maps.Equal(desired, wantDesired) {
			t.Fatalf("Balance and the reference disagree\ninput: %s\nbase:    %v, reference %v\ndesired: %v, reference %v",
				describe(in), base, wantBase, desired, wantDesired)
		}
	}
	if in.StartupTimeout > 0 {
		off := in
		off.StartupTimeout = 0
		without, err := Balance(off)
		if err != nil {
			t.Fatalf("Balance without fallback: %v", err)
		}
		if got, want := counts(r, true), counts(without, false); !maps.Equal(got, want) {
			t.Fatalf("base %v, but without fallback %v\ninput: %s", got, want, describe(in))
		}
	}
	return r
}

// counts maps every target's name to its base or its desired count.
func counts(r Result, base bool) map[string]int {
	out := map[string]int{}
	for _, a := range r.Targets {
		out[a.Name] = a.Desired
		if base {
			out[a.Name] = a.Base
		}
	}
	return out
}

// blockedFor is a target state with started pods and notStarted pods, the
// oldest waiting for waiting.
func blockedFor(t Target, started, notStarted int, waiting time.Duration) Target {
	t.Started, t.NotStarted, t.Waiting = started, notStarted, waiting
	return t
}

func TestBalance(t *testing.T) {
	tests := []struct {
		name         string
		in           Input
		want         map[string]int    // desired
		wantUnplaced int               //
		wantExcess   int               //
		wantMissing  int               //
		wantReasons  map[string]string // target → a substring of its reasons
	}{
		// Priority.
		{
			name: "priority fills the first target up to its max and spills into the next",
			in: Input{Replicas: 5, Policy: Priority, Order: []string{"a", "b"},
				Targets: []Target{{Name: "a", Max: new(3)}, {Name: "b", Max: new(5)}}},
			want:        map[string]int{"a": 3, "b": 2},
			wantReasons: map[string]string{"a": "max 3 reached"},
		},
		{
			name: "priority follows the order, not the names",
			in: Input{Replicas: 4, Policy: Priority, Order: []string{"c", "a", "b"},
				Targets: []Target{{Name: "a"}, {Name: "b"}, {Name: "c", Max: new(2)}}},
			want: map[string]int{"a": 2, "b": 0, "c": 2},
		},
		{
			name: "priority gives every target its min before filling by the order",
			in: Input{Replicas: 10, Policy: Priority, Order: []string{"c", "b"},
				Targets: []Target{{Name: "a", Min: 1}, {Name: "b", Min: 2, Max: new(4)}, {Name: "c", Max: new(5)}}},
			want:        map[string]int{"a": 1, "b": 4, "c": 5},
			wantReasons: map[string]string{"a": "not in the priority order: gets its min of 1 only", "b": "max 4 reached"},
		},
		{
			name: "priority gives a target with max 0 nothing",
			in: Input{Replicas: 3, Policy: Priority, Order: []string{"a", "b"},
				Targets: []Target{{Name: "a", Max: new(0)}, {Name: "b"}}},
			want: map[string]int{"a": 0, "b": 3},
		},
		{
			name: "priority reports what no target can take when all are at their max",
			in: Input{Replicas: 10, Policy: Priority, Order: []string{"a", "b"},
				Targets: []Target{{Name: "a", Max: new(2)}, {Name: "b", Max: new(3)}, {Name: "c", Min: 1}}},
			want:         map[string]int{"a": 2, "b": 3, "c": 1},
			wantUnplaced: 4,
		},
		{
			name: "keeps every min when the mins add up to more than the replicas",
			in: Input{Replicas: 5, Policy: Priority, Order: []string{"b", "a"},
				Targets: []Target{{Name: "a", Min: 3}, {Name: "b", Min: 4, Max: new(6)}}},
			want:        map[string]int{"a": 3, "b": 4},
			wantExcess:  2,
			wantReasons: map[string]string{"a": "min 3 kept: the minimums add up to more than the replicas"},
		},
		{
			name: "gives only the mins for 0 replicas",
			in: Input{Replicas: 0, Policy: Priority, Order: []string{"a", "b"},
				Targets: []Target{{Name: "a", Min: 1}, {Name: "b"}}},
			want:       map[string]int{"a": 1, "b": 0},
			wantExcess: 1,
		},
		{
			name: "gives nothing for 0 replicas and no mins",
			in:   Input{Replicas: 0, Policy: Proportional, Targets: []Target{{Name: "a", Proportion: 1}, {Name: "b", Proportion: 2}}},
			want: map[string]int{"a": 0, "b": 0},
		},
		{
			name:         "places nothing when there are no targets",
			in:           Input{Replicas: 3, Policy: Priority},
			want:         map[string]int{},
			wantUnplaced: 3,
		},
		{
			name:         "places nothing when there are no targets, proportionally",
			in:           Input{Replicas: 3, Policy: Proportional},
			want:         map[string]int{},
			wantUnplaced: 3,
		},
		// Proportional.
		{
			name: "proportional splits 2:1",
			in: Input{Replicas: 9, Policy: Proportional,
				Targets: []Target{{Name: "a", Proportion: 2}, {Name: "b", Proportion: 1}}},
			want: map[string]int{"a": 6, "b": 3},
		},
		{
			name: "proportional rounds the largest remainder up",
			in: Input{Replicas: 10, Policy: Proportional,
				Targets: []Target{{Name: "a", Proportion: 2}, {Name: "b", Proportion: 1}}},
			want: map[string]int{"a": 7, "b": 3},
		},
		{
			name: "proportional 2:1 gives the rest to the other target once the first is at its max",
			in: Input{Replicas: 9, Policy: Proportional,
				Targets: []Target{{Name: "a", Proportion: 2, Max: new(4)}, {Name: "b", Proportion: 1}}},
			want:        map[string]int{"a": 4, "b": 5},
			wantReasons: map[string]string{"a": "max 4 reached"},
		},
		{
			name: "proportional spreads the rest of a target at its max by the other proportions",
			in: Input{Replicas: 7, Policy: Proportional,
				Targets: []Target{{Name: "a", Proportion: 1, Max: new(1)}, {Name: "b", Proportion: 1}, {Name: "c", Proportion: 2}}},
			want: map[string]int{"a": 1, "b": 2, "c": 4},
		},
		{
			name: "proportional counts a min above the share against the total",
			in: Input{Replicas: 4, Policy: Proportional,
				Targets: []Target{{Name: "a", Proportion: 1, Min: 3}, {Name: "b", Proportion: 1}}},
			want: map[string]int{"a": 3, "b": 1},
		},
		{
			name: "proportional breaks ties by name",
			in: Input{Replicas: 4, Policy: Proportional,
				Targets: []Target{{Name: "c", Proportion: 1}, {Name: "b", Proportion: 1}, {Name: "a", Proportion: 1}}},
			want: map[string]int{"a": 2, "b": 1, "c": 1},
		},
		{
			name: "proportional gives a target with proportion 0 only its min",
			in: Input{Replicas: 5, Policy: Proportional,
				Targets: []Target{{Name: "a", Min: 1}, {Name: "b", Proportion: 1}}},
			want:        map[string]int{"a": 1, "b": 4},
			wantReasons: map[string]string{"a": "proportion 0: gets its min of 1 only"},
		},
		{
			name: "proportional keeps every min when the mins add up to more than the replicas",
			in: Input{Replicas: 4, Policy: Proportional,
				Targets: []Target{{Name: "a", Proportion: 5, Min: 2}, {Name: "b", Proportion: 1, Min: 3}}},
			want:       map[string]int{"a": 2, "b": 3},
			wantExcess: 1,
		},
		{
			name: "proportional reports what no target can take when all are at their max",
			in: Input{Replicas: 10, Policy: Proportional,
				Targets: []Target{{Name: "a", Proportion: 1, Max: new(2)}, {Name: "b", Proportion: 3, Max: new(2)}}},
			want:         map[string]int{"a": 2, "b": 2},
			wantUnplaced: 6,
		},
		{
			name: "proportional handles counts as large as a Scale holds",
			in: Input{Replicas: MaxReplicas, Policy: Proportional,
				Targets: []Target{{Name: "a", Proportion: MaxReplicas}, {Name: "b", Proportion: MaxReplicas - 1}, {Name: "c", Proportion: 1}}},
			want: map[string]int{"a": 1073741824, "b": 1073741823, "c": 0},
		},
		// Fallback.
		{
			name: "fallback places replacements for replicas not started within the timeout in the next target",
			in: Input{Replicas: 5, Policy: Priority, Order: []string{"a", "b"}, StartupTimeout: 5 * time.Minute,
				Targets: []Target{blockedFor(Target{Name: "a", Max: new(5)}, 2, 3, 10*time.Minute), {Name: "b"}}},
			want:        map[string]int{"a": 5, "b": 3},
			wantMissing: 3,
			wantReasons: map[string]string{
				"a": "fallback active: 3 replicas not started within 5m0s",
				"b": "holds 3 replacements for replicas not started in blocked targets",
			},
		},
		{
			name: "fallback removes the replacements once the pods have started",
			in: Input{Replicas: 5, Policy: Priority, Order: []string{"a", "b"}, StartupTimeout: 5 * time.Minute,
				Targets: []Target{blockedFor(Target{Name: "a", Max: new(5)}, 5, 0, 10*time.Minute), {Name: "b"}}},
			want: map[string]int{"a": 5, "b": 0},
		},
		{
			name: "fallback waits until a pod has waited longer than the timeout",
			in: Input{Replicas: 5, Policy: Priority, Order: []string{"a", "b"}, StartupTimeout: 5 * time.Minute,
				Targets: []Target{blockedFor(Target{Name: "a", Max: new(5)}, 2, 3, 5*time.Minute), {Name: "b"}}},
			want: map[string]int{"a": 5, "b": 0},
		},
		{
			name: "fallback is off with a timeout of 0",
			in: Input{Replicas: 5, Policy: Priority, Order: []string{"a", "b"},
				Targets: []Target{blockedFor(Target{Name: "a", Max: new(5)}, 2, 3, time.Hour), {Name: "b"}}},
			want: map[string]int{"a": 5, "b": 0},
		},
		{
			name: "fallback counts the replicas a blocked target has not even created as missing",
			in: Input{Replicas: 5, Policy: Priority, Order: []string{"a", "b"}, StartupTimeout: time.Minute,
				Targets: []Target{blockedFor(Target{Name: "a", Max: new(5)}, 1, 1, 2*time.Minute), {Name: "b"}}},
			want:        map[string]int{"a": 5, "b": 4},
			wantMissing: 4,
		},
		{
			name: "fallback reports the replacements no target has room for when the others are at their max",
			in: Input{Replicas: 5, Policy: Priority, Order: []string{"a", "b"}, StartupTimeout: time.Minute,
				Targets: []Target{blockedFor(Target{Name: "a", Max: new(5)}, 2, 3, 2*time.Minute), {Name: "b", Max: new(1)}}},
			want:         map[string]int{"a": 5, "b": 1},
			wantMissing:  3,
			wantUnplaced: 2,
			wantReasons:  map[string]string{"b": "holds 1 replacement for replicas not started in blocked targets"},
		},
		{
			name: "fallback places no replacement in another blocked target",
			in: Input{Replicas: 4, Policy: Priority, Order: []string{"a", "b", "c"}, StartupTimeout: time.Minute,
				Targets: []Target{
					blockedFor(Target{Name: "a", Max: new(2)}, 0, 2, 3*time.Minute),
					blockedFor(Target{Name: "b", Max: new(9)}, 1, 1, 2*time.Minute),
					{Name: "c"},
				}},
			want:        map[string]int{"a": 2, "b": 2, "c": 3},
			wantMissing: 3,
		},
		{
			name: "fallback places only what the mins do not already cover",
			in: Input{Replicas: 4, Policy: Priority, Order: []string{"b"}, StartupTimeout: time.Minute,
				Targets: []Target{blockedFor(Target{Name: "a", Min: 3}, 0, 3, 2*time.Minute), {Name: "b", Min: 3}}},
			want:        map[string]int{"a": 3, "b": 4},
			wantMissing: 3,
		},
		{
			name: "fallback finds nothing missing in a blocked target that runs more than its base",
			in: Input{Replicas: 4, Policy: Priority, Order: []string{"a", "b"}, StartupTimeout: time.Minute,
				Targets: []Target{blockedFor(Target{Name: "a", Max: new(2)}, 3, 1, 2*time.Minute), {Name: "b"}}},
			want:        map[string]int{"a": 2, "b": 2},
			wantReasons: map[string]string{"a": "a pod has not started within 1m0s: takes no replacements"},
		},
		{
			name: "fallback spreads replacements by the proportions of the targets that are not blocked",
			in: Input{Replicas: 9, Policy: Proportional, StartupTimeout: time.Minute,
				Targets: []Target{
					blockedFor(Target{Name: "a", Proportion: 1}, 0, 3, 2*time.Minute),
					{Name: "b", Proportion: 1},
					{Name: "c", Proportion: 1},
				}},
			want:        map[string]int{"a": 3, "b": 5, "c": 4},
			wantMissing: 3,
		},
		{
			name: "fallback spreads proportionally within the max of the targets that are not blocked",
			in: Input{Replicas: 8, Policy: Proportional, StartupTimeout: time.Minute,
				Targets: []Target{
					blockedFor(Target{Name: "a", Proportion: 2}, 1, 3, 2*time.Minute),
					{Name: "b", Proportion: 1, Max: new(3)},
					{Name: "c", Proportion: 1},
				}},
			want:        map[string]int{"a": 4, "b": 3, "c": 4},
			wantMissing: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := balance(t, tt.in)
			if got := counts(r, false); !maps.Equal(got, tt.want) {
				t.Errorf("desired %v, want %v", got, tt.want)
			}
			if r.Unplaced != tt.wantUnplaced || r.Excess != tt.wantExcess || r.Missing != tt.wantMissing {
				t.Errorf("unplaced %d excess %d missing %d, want %d %d %d",
					r.Unplaced, r.Excess, r.Missing, tt.wantUnplaced, tt.wantExcess, tt.wantMissing)
			}
			for _, a := range r.Targets {
				if want, ok := tt.wantReasons[a.Name]; ok && !strings.Contains(strings.Join(a.Reasons, "; "), want) {
					t.Errorf("reasons of %s are %q, want one with %q", a.Name, a.Reasons, want)
				}
			}
		})
	}
}

func TestBalanceExplainsNothingWhenThePolicyAloneDecided(t *testing.T) {
	r := balance(t, Input{Replicas: 6, Policy: Proportional, Targets: []Target{
		{Name: "a", Proportion: 1, Max: new(10)}, {Name: "b", Proportion: 2, Min: 1},
	}})
	for _, a := range r.Targets {
		if a.Reasons != nil {
			t.Errorf("reasons of %s are %q, want none", a.Name, a.Reasons)
		}
	}
}

func TestBalanceRejectsInvalidInputWithAnEmptyResult(t *testing.T) {
	r, err := Balance(Input{Replicas: -1, Policy: Priority})
	if err == nil || err.Error() != "replicas: replicas must be from 0 to 2147483647, got -1" {
		t.Fatalf("error %v", err)
	}
	if !reflect.DeepEqual(r, Result{}) {
		t.Errorf("result %+v, want an empty one", r)
	}
}

// TestProportionalMayMoveOneReplicaAgainstAScaleUp pins the Alabama paradox
// of largest remainder: one more replica in total takes one from a target.
// It is the reason the proportional policy promises less about moves than
// the priority policy; see the package documentation.
func TestProportionalMayMoveOneReplicaAgainstAScaleUp(t *testing.T) {
	in := Input{Policy: Proportional, Targets: []Target{
		{Name: "a", Proportion: 6}, {Name: "b", Proportion: 6}, {Name: "c", Proportion: 2},
	}}
	in.Replicas = 10
	before := counts(balance(t, in), false)
	in.Replicas = 11
	after := counts(balance(t, in), false)
	want := map[string]int{"a": 4, "b": 4, "c": 2}
	if !maps.Equal(before, want) {
		t.Fatalf("10 replicas: %v, want %v", before, want)
	}
	want = map[string]int{"a": 5, "b": 5, "c": 1}
	if !maps.Equal(after, want) {
		t.Fatalf("11 replicas: %v, want %v", after, want)
	}
}
