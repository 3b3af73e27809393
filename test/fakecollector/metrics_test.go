package fakecollector

import (
	"net/http"
	"strings"
	"testing"
)

func TestMetricsReportTargetsUpAndTheirConnectionState(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"ns/r1": good("ns/r1", "a:1"), "r2": good("r2", "b:1")}))
	c.SetConnectionState("r2", ConnectionTransientFailure)
	mustApply(t, c, config(map[string]string{"r2": good("r2", "b:1")}))

	a := call(t, http.MethodGet, c.URL()+"/metrics", "")
	if a.status != http.StatusOK || !strings.HasPrefix(a.contentType, "text/plain; version=0.0.4") {
		t.Fatalf("got %d %q", a.status, a.contentType)
	}
	for _, line := range []string{
		"# TYPE gnmic_target_up gauge",
		`gnmic_target_up{name="ns/r1"} 0`,
		`gnmic_target_up{name="r2"} 1`,
		"# TYPE gnmic_target_connection_state gauge",
		`gnmic_target_connection_state{name="ns/r1"} 0`,
		`gnmic_target_connection_state{name="r2"} 4`,
	} {
		if !strings.Contains(a.body, line+"\n") {
			t.Errorf("metrics lack %q:\n%s", line, a.body)
		}
	}
}

func TestHealthzAlwaysAnswersHealthy(t *testing.T) {
	c := StartForTest(t)
	a := call(t, http.MethodGet, c.URL()+"/api/v1/healthz", "")
	if a.status != http.StatusOK || strings.TrimSpace(a.body) != `{"status":"healthy"}` || !strings.HasPrefix(a.contentType, "text/plain") {
		t.Fatalf("got %d %q %q", a.status, a.contentType, a.body)
	}
}
