package domains

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/balance"
)

func ptr(v int) *int { return &v }

// desired is each domain's Desired, in input order.
func desired(r Result) []int {
	var out []int
	for _, a := range r.Domains {
		out = append(out, a.Desired)
	}
	return out
}

func TestSplit(t *testing.T) {
	three := func(started [3]int, notStarted [3]int, waiting [3]time.Duration) []Domain {
		var ds []Domain
		for i, n := range []string{"zone-c", "zone-a", "zone-b"} {
			ds = append(ds, Domain{Name: n, Started: started[i], NotStarted: notStarted[i], Waiting: waiting[i]})
		}
		return ds
	}
	tests := []struct {
		name        string
		in          Input
		want        []int
		wantBlocked []bool
		wantSlots   []int
	}{
		{
			name:      "without a policy the replicas spread evenly, in the declared order of the domains",
			in:        Input{Replicas: 7, Domains: three([3]int{}, [3]int{}, [3]time.Duration{})},
			want:      []int{2, 3, 2}, // largest remainder breaks ties by name: zone-a first
			wantSlots: []int{0, 1, Stride, Stride + 1, Stride + 2, 2 * Stride, 2*Stride + 1},
		},
		{
			name: "priority fills the first domain up to its maximum, then the next",
			in: Input{Replicas: 5, Policy: balance.Priority, Order: []string{"a", "b"},
				Domains: []Domain{{Name: "a", Max: ptr(3)}, {Name: "b"}}},
			want: []int{3, 2},
		},
		{
			name: "proportional follows the proportions; a domain left out keeps its minimum",
			in: Input{Replicas: 9, Policy: balance.Proportional, Proportions: map[string]int{"a": 2, "b": 1},
				Domains: []Domain{{Name: "a"}, {Name: "b"}, {Name: "c", Min: 1}}},
			want: []int{5, 3, 1},
		},
		{
			name: "a domain whose pods waited less than the startup timeout is waited for",
			in: Input{Replicas: 6, StartupTimeout: 20 * time.Second,
				Domains: three([3]int{0, 2, 2}, [3]int{2, 0, 0}, [3]time.Duration{19 * time.Second})},
			want:        []int{2, 2, 2},
			wantBlocked: []bool{false, false, false},
		},
		{
			name: "a domain whose pods waited longer than the startup timeout runs its replicas in the others",
			in: Input{Replicas: 6, StartupTimeout: 20 * time.Second,
				Domains: three([3]int{0, 2, 2}, [3]int{2, 0, 0}, [3]time.Duration{21 * time.Second})},
			want:        []int{2, 3, 3}, // zone-c keeps its 2 (they may still start), zone-a and zone-b take 1 each
			wantBlocked: []bool{true, false, false},
		},
		{
			name: "once the blocked domain's pods start the replacements go",
			in: Input{Replicas: 6, StartupTimeout: 20 * time.Second,
				Domains: three([3]int{2, 3, 3}, [3]int{}, [3]time.Duration{})},
			want:        []int{2, 2, 2},
			wantBlocked: []bool{false, false, false},
		},
		{
			name: "without a fallback a domain that does not start is waited for, however long",
			in: Input{Replicas: 6,
				Domains: three([3]int{0, 2, 2}, [3]int{2, 0, 0}, [3]time.Duration{time.Hour})},
			want: []int{2, 2, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Split(tt.in)
			if err != nil {
				t.Fatalf("Split: %v", err)
			}
			if d := desired(got); !reflect.DeepEqual(d, tt.want) {
				t.Errorf("desired = %v, want %v", d, tt.want)
			}
			for i, a := range got.Domains {
				if a.Name != tt.in.Domains[i].Name {
					t.Errorf("domain %d is %q, want %q (the input's order)", i, a.Name, tt.in.Domains[i].Name)
				}
				if tt.wantBlocked != nil && a.Blocked != tt.wantBlocked[i] {
					t.Errorf("%s blocked = %v, want %v", a.Name, a.Blocked, tt.wantBlocked[i])
				}
			}
			if tt.wantSlots != nil && !reflect.DeepEqual(got.Slots(), tt.wantSlots) {
				t.Errorf("slots = %v, want %v", got.Slots(), tt.wantSlots)
			}
		})
	}
}

func TestSplitRefusesWhatTheCoreRefuses(t *testing.T) {
	_, err := Split(Input{Replicas: 2, Domains: []Domain{{Name: "a"}, {Name: "a"}}})
	var inputErr *balance.InputError
	if err == nil || !errors.As(err, &inputErr) {
		t.Fatalf("Split with two domains named a: err = %v, want a *balance.InputError", err)
	}
}

func TestSlotAndLocateAreInverse(t *testing.T) {
	for _, tt := range []struct{ index, ordinal int }{{0, 0}, {0, 7}, {1, 0}, {2, 3}, {31, Stride - 1}} {
		slot := Slot(tt.index, tt.ordinal)
		if i, o := Locate(slot); i != tt.index || o != tt.ordinal {
			t.Errorf("Locate(Slot(%d, %d) = %d) = %d, %d", tt.index, tt.ordinal, slot, i, o)
		}
	}
	if Slot(0, 5) != 5 {
		t.Errorf("Slot(0, 5) = %d: the first domain's pods must be numbered by their ordinal", Slot(0, 5))
	}
}

func TestNextBlock(t *testing.T) {
	timeout := 20 * time.Second
	tests := []struct {
		name string
		in   Input
		want time.Duration
	}{
		{"no fallback, no look", Input{Domains: []Domain{{Name: "a", NotStarted: 1, Waiting: time.Second}}}, 0},
		{"nothing waits, no look", Input{StartupTimeout: timeout, Domains: []Domain{{Name: "a", Started: 2}}}, 0},
		{"the domain that waited longest decides", Input{StartupTimeout: timeout, Domains: []Domain{
			{Name: "a", NotStarted: 1, Waiting: 5 * time.Second}, {Name: "b", NotStarted: 1, Waiting: 15 * time.Second}}},
			5*time.Second + time.Millisecond},
		{"a domain blocked already needs no look", Input{StartupTimeout: timeout, Domains: []Domain{
			{Name: "a", NotStarted: 1, Waiting: 30 * time.Second}}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NextBlock(tt.in); got != tt.want {
				t.Errorf("NextBlock = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestWaitingSince(t *testing.T) {
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	prev, oldest := now.Add(-30*time.Second), now.Add(-5*time.Second)
	tests := []struct {
		name      string
		prev      time.Time
		unstarted int
		oldest    time.Time
		want      time.Time
	}{
		{"a domain whose pods all started does not wait", prev, 0, time.Time{}, time.Time{}},
		{"a domain starts waiting when its oldest not-started pod did", time.Time{}, 2, oldest, oldest},
		{"a recreated pod does not restart the wait", prev, 2, oldest, prev},
		{"desired pods that do not exist yet keep the wait going", prev, 1, time.Time{}, prev},
		{"desired pods that do not exist start a wait now", time.Time{}, 1, time.Time{}, now},
		{"an older pod than the remembered wait dates it", oldest, 1, prev, prev},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WaitingSince(tt.prev, tt.unstarted, tt.oldest, now); !got.Equal(tt.want) {
				t.Errorf("WaitingSince = %s, want %s", got, tt.want)
			}
		})
	}
}
