package fakecollector

import (
	"net/http"
	"reflect"
	"testing"
)

func TestAFailedStartStaysFailedUntilTheTargetIsEnabled(t *testing.T) {
	c := StartForTest(t)
	body := config(map[string]string{"ns/r1": good("ns/r1", "a:1")})
	c.FailStart("ns/r1", "connection refused")
	mustApply(t, c, body)

	s := status(t, c, "ns/r1")
	if s.State != StateFailed || s.FailedReason != "connection refused" || s.Subscriptions["sub1"] != SubscriptionStopped {
		t.Fatalf("status = %+v, want failed with the injected reason", s)
	}
	if changes := mustApply(t, c, body); !changes.Empty() || status(t, c, "ns/r1").State != StateFailed {
		t.Fatalf("re-applying the same config must change nothing, got %+v", changes)
	}
	if got := c.Counts("ns/r1").Starts; got != 1 {
		t.Fatalf("nothing retries a failed target, starts = %d", got)
	}

	a := call(t, http.MethodPost, c.URL()+"/api/v1/targets/ns%2Fr1/state/enabled", "")
	if a.status != http.StatusOK || !status(t, c, "ns/r1").Collecting() {
		t.Fatalf("enable: %d %s, status %+v", a.status, a.body, status(t, c, "ns/r1"))
	}
	a = call(t, http.MethodPost, c.URL()+"/api/v1/targets/ns%2Fr1/state/enabled", "")
	if a.status != http.StatusBadRequest || !reflect.DeepEqual(errorsOf(t, a), []string{"target state not changed"}) {
		t.Fatalf("enabling a running target: %d %s, want 400 target state not changed", a.status, a.body)
	}
}

func TestTheConfigStateEndpointAlsoEnablesAFailedTarget(t *testing.T) {
	c := StartForTest(t)
	c.FailStart("r1", "unreachable")
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))

	a := call(t, http.MethodPost, c.URL()+"/api/v1/config/targets/r1/state", `{"state":"enabled"}`)
	if a.status != http.StatusOK || !status(t, c, "r1").Collecting() {
		t.Fatalf("enable: %d %s", a.status, a.body)
	}
	a = call(t, http.MethodPost, c.URL()+"/api/v1/config/targets/r1/state", `{"state":"enabled"}`)
	if a.status != http.StatusBadRequest {
		t.Fatalf("second enable: %d, want 400", a.status)
	}
	a = call(t, http.MethodPost, c.URL()+"/api/v1/config/targets/nope/state", `{"state":"enabled"}`)
	if a.status != http.StatusNotFound {
		t.Fatalf("unknown target: %d, want 404", a.status)
	}
}

func TestDisablingStopsATargetAndEnablingStartsItAgain(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))

	call(t, http.MethodPost, c.URL()+"/api/v1/targets/r1/state/disabled", "")
	if s := status(t, c, "r1"); s.State != StateStopped || s.IntendedState != IntendedDisabled || s.Collecting() {
		t.Fatalf("after disable: %+v", s)
	}
	call(t, http.MethodPost, c.URL()+"/api/v1/targets/r1/state/enabled", "")
	if s := status(t, c, "r1"); !s.Collecting() || s.IntendedState != IntendedEnabled {
		t.Fatalf("after enable: %+v", s)
	}
}

func TestADeviceThatRecoversStaysFailedUntilEnabled(t *testing.T) {
	c := StartForTest(t)
	c.DeviceDown("r1", "no route to host")
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))

	call(t, http.MethodPost, c.URL()+"/api/v1/targets/r1/state/enabled", "")
	if s := status(t, c, "r1"); s.State != StateFailed {
		t.Fatalf("enabling while the device is down fails again, got %+v", s)
	}
	c.DeviceUp("r1")
	if s := status(t, c, "r1"); s.State != StateFailed {
		t.Fatalf("a recovered device is not retried, got %+v", s)
	}
	call(t, http.MethodPost, c.URL()+"/api/v1/targets/r1/state/enabled", "")
	if s := status(t, c, "r1"); !s.Collecting() {
		t.Fatalf("enabling after recovery collects, got %+v", s)
	}
}

func TestAReconnectRestartsAFailedTarget(t *testing.T) {
	c := StartForTest(t)
	c.FailStart("r1", "refused")
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	mustApply(t, c, config(map[string]string{"r1": good("r1", "b:1")}))
	if s := status(t, c, "r1"); !s.Collecting() {
		t.Fatalf("a changed address reconnects, got %+v", s)
	}
}

func TestInjectedApplyFailureAnswersUntilCleared(t *testing.T) {
	c := StartForTest(t)
	c.FailApply(http.StatusInternalServerError, "store unavailable")
	a := apply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	if a.status != http.StatusInternalServerError || !reflect.DeepEqual(errorsOf(t, a), []string{"store unavailable"}) {
		t.Fatalf("got %d %s", a.status, a.body)
	}
	if len(c.Targets()) != 0 || c.ApplyCount() != 0 {
		t.Fatal("a failed apply must change nothing")
	}
	c.ClearApplyFailure()
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
}

func TestConnectionStateOverrideStopsCollectingUntilCleared(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))

	c.SetConnectionState("r1", ConnectionTransientFailure)
	if s := status(t, c, "r1"); s.State != StateRunning || s.ConnectionState != ConnectionTransientFailure || s.Collecting() {
		t.Fatalf("status = %+v, want running but not collecting", s)
	}
	c.ClearConnectionState("r1")
	if s := status(t, c, "r1"); !s.Collecting() {
		t.Fatalf("status = %+v, want collecting again", s)
	}
}

func TestEnablingAnswers200EvenWhenTheStartFailsAgainAtOnce(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
	}{
		{"acting within the apply", nil},
		{"with the change queue", []Option{Realistic()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StartForTest(t, tt.opts...)
			c.DeviceDown("r1", "no route to host")
			mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
			waitIdle(t, c)

			a := call(t, http.MethodPost, c.URL()+"/api/v1/targets/r1/state/enabled", "")
			if a.status != http.StatusOK || a.body != "" {
				t.Fatalf("enable: %d %q, want 200 with no body although the start fails", a.status, a.body)
			}
			if s := status(t, c, "r1"); s.State != StateFailed || s.FailedReason != "no route to host" {
				t.Fatalf("after enable: %+v, want failed again; only the state tells", s)
			}
			if got := c.Counts("r1").Starts; got != 2 {
				t.Fatalf("starts = %d, want the apply's and the enable's", got)
			}
		})
	}
}

func TestEndedSubscriptionStopsCollectingWithTheConnectionReady(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	sub := ""
	for name := range status(t, c, "r1").Subscriptions {
		sub = name
	}
	c.EndSubscription("r1", sub, "rpc error: code = Unavailable desc = stream ended by device")
	st, ok := c.TargetStatus("r1")
	if !ok || st.State != StateRunning || st.ConnectionState != ConnectionReady || st.Subscriptions[sub] != SubscriptionStopped ||
		st.FailedReason == "" || st.Collecting() {
		t.Fatalf("after the device ended the stream: %+v", st)
	}
	c.ResumeSubscription("r1", sub)
	if st, _ := c.TargetStatus("r1"); !st.Collecting() || st.FailedReason != "" {
		t.Fatalf("after the stream resumed: %+v", st)
	}
}
