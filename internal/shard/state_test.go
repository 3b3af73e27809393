package shard

import (
	"errors"
	"testing"
)

func TestTransition(t *testing.T) {
	owned := ClusterState{Owner: "a", Generation: 4}
	drained := ClusterState{Owner: "a", Generation: 4, Drained: true}
	tests := []struct {
		name      string
		state     ClusterState
		event     Event
		want      ClusterState
		wantStale bool
		wantErr   bool
	}{
		{
			name:  "an owner's acknowledgement drains the cluster",
			state: owned, event: Event{Kind: Acknowledged, Member: "a", Generation: 4},
			want: drained,
		},
		{
			name:  "a repeated acknowledgement changes nothing",
			state: drained, event: Event{Kind: Acknowledged, Member: "a", Generation: 4},
			want: drained,
		},
		{
			name:  "rejects an acknowledgement of an older generation",
			state: owned, event: Event{Kind: Acknowledged, Member: "a", Generation: 3},
			want: owned, wantStale: true,
		},
		{
			name:  "rejects an acknowledgement by another member",
			state: owned, event: Event{Kind: Acknowledged, Member: "b", Generation: 4},
			want: owned, wantStale: true,
		},
		{
			name:  "a takeover of a free cluster makes the first generation",
			state: ClusterState{}, event: Event{Kind: TookOver, Member: "b", Generation: 0},
			want: ClusterState{Owner: "b", Generation: 1},
		},
		{
			name:  "a takeover bumps the generation and clears the drain",
			state: drained, event: Event{Kind: TookOver, Member: "b", Generation: 4},
			want: ClusterState{Owner: "b", Generation: 5},
		},
		{
			name:  "the owner takes its drained cluster back at a new generation",
			state: drained, event: Event{Kind: TookOver, Member: "a", Generation: 4},
			want: ClusterState{Owner: "a", Generation: 5},
		},
		{
			name:  "rejects a takeover observed at an older generation",
			state: ClusterState{Owner: "b", Generation: 5}, event: Event{Kind: TookOver, Member: "c", Generation: 4},
			want: ClusterState{Owner: "b", Generation: 5}, wantStale: true,
		},
		{
			name:  "rejects an event without a member",
			state: owned, event: Event{Kind: TookOver, Generation: 4},
			want: owned, wantStale: true,
		},
		{
			name:  "rejects an event of unknown kind",
			state: owned, event: Event{Kind: 0, Member: "a", Generation: 4},
			want: owned, wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Transition(tt.state, tt.event)
			if got != tt.want {
				t.Errorf("state %+v, want %+v", got, tt.want)
			}
			if stale := errors.Is(err, ErrStale); stale != tt.wantStale || (err != nil) != (tt.wantStale || tt.wantErr) {
				t.Errorf("error %v, want stale %v", err, tt.wantStale)
			}
		})
	}
}

func TestMayPush(t *testing.T) {
	owned := ClusterState{Owner: "a", Generation: 4}
	tests := []struct {
		name     string
		state    ClusterState
		member   string
		observed int64
		want     bool
	}{
		{"lets the owner push at its generation", owned, "a", 4, true},
		{"not at an older generation", owned, "a", 3, false},
		{"not another member", owned, "b", 4, false},
		{"not after the owner acknowledged a drain", ClusterState{Owner: "a", Generation: 4, Drained: true}, "a", 4, false},
		{"not without an owner", ClusterState{}, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.state.MayPush(tt.member, tt.observed); got != tt.want {
				t.Errorf("MayPush = %v, want %v", got, tt.want)
			}
		})
	}
}
