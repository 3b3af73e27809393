package rejection

import (
	"reflect"
	"testing"
	"time"
)

func TestTrack(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	earlier := now.Add(-30 * time.Second)
	tests := []struct {
		name     string
		since    map[string]time.Time
		outcomes map[string]Outcome
		want     map[string]time.Time
	}{
		{
			name:     "a pod's first refusal starts its count now",
			outcomes: map[string]Outcome{"a": Refused, "b": Accepted},
			want:     map[string]time.Time{"a": now},
		},
		{
			name:     "a pod that refuses again keeps the time it began refusing",
			since:    map[string]time.Time{"a": earlier},
			outcomes: map[string]Outcome{"a": Refused},
			want:     map[string]time.Time{"a": earlier},
		},
		{
			name:     "a pod that accepts is forgotten",
			since:    map[string]time.Time{"a": earlier},
			outcomes: map[string]Outcome{"a": Accepted},
			want:     map[string]time.Time{},
		},
		{
			name:     "a refusal that turns out to be the configuration's fault forgets the pod's count",
			since:    map[string]time.Time{"a": earlier},
			outcomes: map[string]Outcome{"a": SharedRejection},
			want:     map[string]time.Time{},
		},
		{
			name:     "a shared rejection starts no count",
			outcomes: map[string]Outcome{"a": SharedRejection, "b": SharedRejection},
			want:     map[string]time.Time{},
		},
		{
			name:     "a pod not tried keeps its count, and one that never refused stays unknown",
			since:    map[string]time.Time{"a": earlier},
			outcomes: map[string]Outcome{"a": NotTried, "b": NotTried},
			want:     map[string]time.Time{"a": earlier},
		},
		{
			name:     "a pod that is gone is forgotten",
			since:    map[string]time.Time{"a": earlier, "gone": earlier},
			outcomes: map[string]Outcome{"a": Refused},
			want:     map[string]time.Time{"a": earlier},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Track(tt.since, tt.outcomes, now); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Track = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExclude(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	grace := time.Minute
	tests := []struct {
		name         string
		in           Pods
		wantExcluded map[int]time.Time
		wantEnds     time.Time
	}{
		{
			name:         "a pod refusing for less than the grace period keeps its place until the grace ends",
			in:           Pods{Ready: []int{0, 1}, RefusingSince: map[int]time.Time{1: now.Add(-10 * time.Second)}, Grace: grace, Now: now},
			wantExcluded: map[int]time.Time{},
			wantEnds:     now.Add(50 * time.Second),
		},
		{
			name:         "a pod refusing for the grace period or longer leaves placement",
			in:           Pods{Ready: []int{0, 1, 2}, RefusingSince: map[int]time.Time{1: now.Add(-grace), 2: now.Add(-time.Hour)}, Grace: grace, Now: now},
			wantExcluded: map[int]time.Time{1: now.Add(-grace), 2: now.Add(-time.Hour)},
		},
		{
			name:         "when every ready pod refuses none leaves: moving targets would help nothing",
			in:           Pods{Ready: []int{0, 1}, RefusingSince: map[int]time.Time{0: now.Add(-time.Hour), 1: now.Add(-time.Hour)}, Grace: grace, Now: now},
			wantExcluded: map[int]time.Time{},
		},
		{
			name:         "a lone refusing pod keeps its place",
			in:           Pods{Ready: []int{0}, RefusingSince: map[int]time.Time{0: now.Add(-time.Hour)}, Grace: grace, Now: now},
			wantExcluded: map[int]time.Time{},
		},
		{
			name: "a pod that is not ready is not placement's to exclude",
			in: Pods{Ready: []int{0, 1}, RefusingSince: map[int]time.Time{1: now.Add(-time.Hour), 5: now.Add(-time.Hour)},
				Grace: grace, Now: now},
			wantExcluded: map[int]time.Time{1: now.Add(-time.Hour)},
		},
		{
			name:         "a zero grace period excludes at the first refusal",
			in:           Pods{Ready: []int{0, 1}, RefusingSince: map[int]time.Time{1: now}, Grace: 0, Now: now},
			wantExcluded: map[int]time.Time{1: now},
		},
		{
			name: "the earliest grace end among pods still in grace is reported",
			in: Pods{Ready: []int{0, 1, 2, 3}, RefusingSince: map[int]time.Time{1: now.Add(-5 * time.Second), 2: now.Add(-40 * time.Second),
				3: now.Add(-2 * time.Minute)}, Grace: grace, Now: now},
			wantExcluded: map[int]time.Time{3: now.Add(-2 * time.Minute)},
			wantEnds:     now.Add(20 * time.Second),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Exclude(tt.in)
			if !reflect.DeepEqual(got.Excluded, tt.wantExcluded) {
				t.Errorf("Excluded = %v, want %v", got.Excluded, tt.wantExcluded)
			}
			if !got.GraceEnds.Equal(tt.wantEnds) {
				t.Errorf("GraceEnds = %v, want %v", got.GraceEnds, tt.wantEnds)
			}
		})
	}
}
