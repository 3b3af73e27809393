package gnmic

import "testing"

func TestCollectingNeedsAReadyConnectionAndEverySubscriptionRunning(t *testing.T) {
	running := map[string]string{"a": SubscriptionRunning, "b": SubscriptionRunning}
	tests := []struct {
		name   string
		status TargetStatus
		want   bool
	}{
		{"ready with all subscriptions running", TargetStatus{State: StateRunning, ConnectionState: ConnectionReady, Subscriptions: running}, true},
		{"running but connecting", TargetStatus{State: StateRunning, ConnectionState: ConnectionConnecting, Subscriptions: running}, false},
		{"ready with one subscription stopped", TargetStatus{State: StateRunning, ConnectionState: ConnectionReady, Subscriptions: map[string]string{"a": SubscriptionRunning, "b": SubscriptionStopped}}, false},
		{"ready without subscriptions", TargetStatus{State: StateRunning, ConnectionState: ConnectionReady}, false},
		{"failed with an empty connection state", TargetStatus{State: StateFailed, Subscriptions: running}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.status.Collecting(); got != tt.want {
				t.Errorf("Collecting() = %v, want %v", got, tt.want)
			}
			if got := (TargetState{State: tt.status}).Collecting(); got != tt.want {
				t.Errorf("TargetState.Collecting() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFailedMeansStateFailedWhateverTheConnectionSays(t *testing.T) {
	tests := []struct {
		status TargetStatus
		want   bool
	}{
		{TargetStatus{State: StateFailed, ConnectionState: ConnectionReady}, true},
		{TargetStatus{State: StateFailed}, true},
		{TargetStatus{State: StateRunning, ConnectionState: ConnectionTransientFailure}, false},
		{TargetStatus{State: StateStopped}, false},
	}
	for _, tt := range tests {
		if got := (TargetState{State: tt.status}).Failed(); got != tt.want {
			t.Errorf("%+v: Failed() = %v, want %v", tt.status, got, tt.want)
		}
	}
}
