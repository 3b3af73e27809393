package fakecollector

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTargetsCollectRightAfterApply(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))

	s := status(t, c, "r1")
	want := map[string]string{"sub1": SubscriptionRunning}
	if s.State != StateRunning || s.ConnectionState != ConnectionReady || !reflect.DeepEqual(s.Subscriptions, want) {
		t.Fatalf("status = %+v, want running, READY, sub1 running", s)
	}
	if !s.Collecting() || s.IntendedState != IntendedEnabled || s.LastUpdated.IsZero() {
		t.Fatalf("status = %+v, want collecting, enabled, stamped", s)
	}
}

func TestTargetsCollectOnlyAfterTheStartDelay(t *testing.T) {
	c := StartForTest(t, WithStartDelay(100*time.Millisecond))
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))

	s := status(t, c, "r1")
	if s.State != StateStarting || s.ConnectionState != ConnectionConnecting || s.Subscriptions["sub1"] != SubscriptionStopped {
		t.Fatalf("right after apply: %+v, want starting, CONNECTING, sub1 stopped", s)
	}
	waitFor(t, "r1 collecting", func() bool { return status(t, c, "r1").Collecting() })
}

func TestATargetWithoutTimeoutFailsAtOnce(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": `"name":"r1","address":"a:1","insecure":true`}))

	s := status(t, c, "r1")
	if s.State != StateFailed || !strings.Contains(s.FailedReason, "zero timeout") || s.Collecting() {
		t.Fatalf("status = %+v, want failed for the zero timeout", s)
	}
}

func TestATargetWithNeitherInsecureNorSkipVerifyFails(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": `"name":"r1","address":"a:1","timeout":"10s"`}))
	if s := status(t, c, "r1"); s.State != StateFailed || !strings.Contains(s.FailedReason, "skip-verify") {
		t.Fatalf("status = %+v, want failed for the unset skip-verify", s)
	}
	mustApply(t, c, config(map[string]string{"r1": `"name":"r1","address":"a:1","timeout":"10s","skip-verify":false`}))
	if s := status(t, c, "r1"); !s.Collecting() {
		t.Fatalf("an explicit skip-verify reconnects and collects, got %+v", s)
	}
}

func TestATargetWithoutSubscriptionListRunsEverySubscription(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, `{"subscriptions":{"a":{"name":"a"},"b":{"name":"b"}},`+
		`"targets":{"all":{`+good("all", "x:1")+`},"one":{`+good("one", "y:1")+`,"subscriptions":["b","missing"]}}}`)

	if got := status(t, c, "all").Subscriptions; len(got) != 2 {
		t.Errorf("target without a list runs %v, want a and b", got)
	}
	if got := status(t, c, "one").Subscriptions; !reflect.DeepEqual(got, map[string]string{"b": SubscriptionRunning}) {
		t.Errorf("target with a list runs %v, want only b (unknown names skipped)", got)
	}
}

func TestGetTargetsListsStatesAndMasksCredentials(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{
		"ns/r1": good("ns/r1", "a:1") + `,"username":"admin","password":"s3cret","token":"t0ken"`,
		"ns/r2": good("ns/r2", "b:1"),
	}))

	a := call(t, http.MethodGet, c.URL()+"/api/v1/targets", "")
	if a.status != http.StatusOK || !strings.HasPrefix(a.contentType, "text/plain") {
		t.Fatalf("got %d %q", a.status, a.contentType)
	}
	if strings.Contains(a.body, "s3cret") || strings.Contains(a.body, "t0ken") {
		t.Fatalf("credentials in clear: %s", a.body)
	}
	views := targetViews(t, a)
	if len(views) != 2 || views[0].Name != "ns/r1" || views[0].Config["username"] != "admin" || views[0].Config["password"] != "****" {
		t.Fatalf("views = %+v", views)
	}
	if timeout := views[0].Config["timeout"]; timeout != float64(10*time.Second) {
		t.Errorf("config durations are nanoseconds like gNMIc's, got %v", timeout)
	}
	if !views[1].State.Collecting() {
		t.Errorf("state of ns/r2 = %+v, want collecting", views[1].State)
	}
}

func TestGetOneTargetByItsEscapedName(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"ns/r1": good("ns/r1", "a:1")}))

	a := call(t, http.MethodGet, c.URL()+"/api/v1/targets/ns%2Fr1", "")
	if views := targetViews(t, a); a.status != http.StatusOK || len(views) != 1 || views[0].Name != "ns/r1" {
		t.Fatalf("got %d %s, want a one-element array", a.status, a.body)
	}
	a = call(t, http.MethodGet, c.URL()+"/api/v1/targets/ns%2Fnope", "")
	if a.status != http.StatusNotFound || !reflect.DeepEqual(errorsOf(t, a), []string{"target not found"}) {
		t.Fatalf("unknown target: got %d %s", a.status, a.body)
	}
}
