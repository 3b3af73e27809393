package availability

import (
	"reflect"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	grace := time.Minute
	tests := []struct {
		name        string
		in          Input
		wantReady   []int
		wantHolding []int
		wantEnds    time.Time
	}{
		{
			name:      "every ready pod below the replica count is ready",
			in:        Input{Replicas: 3, Pods: []Pod{{Ordinal: 2, Ready: true}, {Ordinal: 0, Ready: true}, {Ordinal: 1, Ready: true}}, Grace: grace, Now: now},
			wantReady: []int{0, 1, 2},
		},
		{
			name:        "a pod that turned unready 10s ago holds its targets until its grace ends",
			in:          Input{Replicas: 2, Pods: []Pod{{Ordinal: 0, Ready: true}, {Ordinal: 1, UnreadySince: now.Add(-10 * time.Second)}}, Grace: grace, Now: now},
			wantReady:   []int{0},
			wantHolding: []int{1},
			wantEnds:    now.Add(50 * time.Second),
		},
		{
			name:      "a pod unready for longer than the grace period is gone",
			in:        Input{Replicas: 2, Pods: []Pod{{Ordinal: 0, Ready: true}, {Ordinal: 1, UnreadySince: now.Add(-2 * time.Minute)}}, Grace: grace, Now: now},
			wantReady: []int{0},
		},
		{
			name:        "a missing desired pod starts its grace now",
			in:          Input{Replicas: 2, Pods: []Pod{{Ordinal: 0, Ready: true}}, Grace: grace, Now: now},
			wantReady:   []int{0},
			wantHolding: []int{1},
			wantEnds:    now.Add(grace),
		},
		{
			name:      "a pod at or above the replica count is being scaled away and has no grace",
			in:        Input{Replicas: 1, Pods: []Pod{{Ordinal: 0, Ready: true}, {Ordinal: 1, Ready: true}, {Ordinal: 2, UnreadySince: now}}, Grace: grace, Now: now},
			wantReady: []int{0},
		},
		{
			name:      "a zero grace period orphans unready pods at once",
			in:        Input{Replicas: 2, Pods: []Pod{{Ordinal: 0, Ready: true}, {Ordinal: 1}}, Grace: 0, Now: now},
			wantReady: []int{0},
		},
		{
			name:        "the earliest grace end is reported",
			in:          Input{Replicas: 3, Pods: []Pod{{Ordinal: 0, UnreadySince: now.Add(-5 * time.Second)}, {Ordinal: 1, UnreadySince: now.Add(-30 * time.Second)}, {Ordinal: 2, Ready: true}}, Grace: grace, Now: now},
			wantReady:   []int{2},
			wantHolding: []int{0, 1},
			wantEnds:    now.Add(30 * time.Second),
		},
		{
			name: "desired ordinals in place of a replica count: only those are ready or holding",
			in: Input{Desired: []int{0, 100000, 100001}, Pods: []Pod{{Ordinal: 0, Ready: true}, {Ordinal: 1, Ready: true},
				{Ordinal: 100000, Ready: true}}, Grace: grace, Now: now},
			wantReady:   []int{0, 100000},
			wantHolding: []int{100001},
			wantEnds:    now.Add(grace),
		},
		{
			name:        "an unready-since in the future counts from now",
			in:          Input{Replicas: 1, Pods: []Pod{{Ordinal: 0, UnreadySince: now.Add(time.Hour)}}, Grace: grace, Now: now},
			wantHolding: []int{0},
			wantEnds:    now.Add(grace),
		},
		{
			name: "zero replicas have nothing available",
			in:   Input{Replicas: 0, Pods: []Pod{{Ordinal: 0, Ready: true}}, Grace: grace, Now: now},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.in)
			if !reflect.DeepEqual(got.Ready, tt.wantReady) {
				t.Errorf("Ready = %v, want %v", got.Ready, tt.wantReady)
			}
			if !reflect.DeepEqual(got.Holding, tt.wantHolding) {
				t.Errorf("Holding = %v, want %v", got.Holding, tt.wantHolding)
			}
			if !got.GraceEnds.Equal(tt.wantEnds) {
				t.Errorf("GraceEnds = %v, want %v", got.GraceEnds, tt.wantEnds)
			}
		})
	}
}
