package fakecollector

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// releases are the gNMIc releases the operator tells apart, and the ones between.
var releases = []string{"0.42.0", "0.43.0", "0.44.0", "0.45.0", "0.46.0", "0.47.0"}

// gorilla/mux's answer to a path no route has.
const noRoute = "404 page not found\n"

// byRelease picks, for release, the value of the newest entry of since whose key is release or older.
func byRelease[V any](t *testing.T, name string, since map[string]V) V {
	t.Helper()
	r := mustParseRelease(name)
	var best release
	var v V
	found := false
	for key, value := range since {
		k := mustParseRelease(key)
		if r.atLeast(k) && (!found || k.atLeast(best)) {
			best, v, found = k, value, true
		}
	}
	if !found {
		t.Fatalf("no answer for release %s", name)
	}
	return v
}

// openStatus opens a request and returns its status and content type without reading the body: an event
// stream's body does not end.
func openStatus(t *testing.T, method, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Content-Type")
}

func TestTheDefaultReleaseIsTheNewest(t *testing.T) {
	if got := New().Release(); got != NewestRelease {
		t.Fatalf("Release() = %s, want %s", got, NewestRelease)
	}
	if got := New(WithRelease("v0.44.0")).Release(); got != "0.44.0" {
		t.Fatalf("Release() = %s, want 0.44.0", got)
	}
}

func TestEachReleaseAnswersTheOperatorsRequestsAsGNMIcDoes(t *testing.T) {
	type want struct {
		status int
		body   string
	}
	notFound := want{http.StatusNotFound, `{"errors":["target not found"]}` + "\n"}
	for _, tt := range []struct {
		name, method, path, body string
		since                    map[string]want
	}{
		{"config apply", http.MethodPost, "/api/v1/config/apply", `{}`, map[string]want{
			"0.42.0": {http.StatusNotFound, noRoute}, // pkg/app has no /config/apply
			"0.43.0": {http.StatusOK, ""},
		}},
		{"target state from the body", http.MethodPost, "/api/v1/config/targets/x/state", `{"state":"enabled"}`, map[string]want{
			"0.42.0": {http.StatusNotFound, noRoute},
			"0.43.0": {http.StatusBadRequest, `{"errors":["target state is required"]}` + "\n"},
			"0.47.0": notFound,
		}},
		{"target state in the path", http.MethodPost, "/api/v1/targets/x/state/enabled", "", map[string]want{
			"0.42.0": {http.StatusNotFound, noRoute},
			"0.43.0": notFound,
		}},
		{"targets", http.MethodGet, "/api/v1/targets", "", map[string]want{
			"0.42.0": {http.StatusOK, `{}`}, // pkg/app's a.Targets: a map, not a list
			"0.43.0": {http.StatusOK, "[]\n"},
		}},
		{"one target", http.MethodGet, "/api/v1/targets/x", "", map[string]want{
			"0.42.0": {http.StatusNotFound, `{"errors":["no targets found"]}` + "\n"},
			"0.43.0": notFound,
		}},
		{"health", http.MethodGet, "/api/v1/healthz", "", map[string]want{
			"0.42.0": {http.StatusOK, `{"status":"healthy"}`},
		}},
	} {
		for _, release := range releases {
			t.Run(tt.name+"/"+release, func(t *testing.T) {
				c := StartForTest(t, WithRelease(release))
				w := byRelease(t, release, tt.since)
				a := call(t, tt.method, c.URL()+tt.path, tt.body)
				if a.status != w.status || a.body != w.body {
					t.Fatalf("%s %s on %s = %d %q, want %d %q", tt.method, tt.path, release, a.status, a.body, w.status, w.body)
				}
			})
		}
	}
}

// v0.42.0's pkg/app labels what it routes application/json and answers its configuration as config.Config.
func TestV042AnswersWithPkgAppsAPI(t *testing.T) {
	c := StartForTest(t, WithRelease("0.42.0"))
	a := call(t, http.MethodGet, c.URL()+"/api/v1/config", "")
	if a.status != http.StatusOK || a.body != `{"CfgFile":""}` || a.contentType != "application/json" {
		t.Fatalf("GET /api/v1/config = %d %s %q, want 200 application/json {\"CfgFile\":\"\"}", a.status, a.contentType, a.body)
	}
	for _, path := range []string{"/api/v1/config/targets", "/api/v1/sse/targets", "/api/v1/config/apply"} {
		if a := call(t, http.MethodGet, c.URL()+path, ""); a.status != http.StatusNotFound || a.body != noRoute {
			t.Errorf("GET %s = %d %q, want 404 %q", path, a.status, a.body, noRoute)
		}
	}
}

func TestStateStreamsExistFromV044(t *testing.T) {
	for _, release := range releases {
		t.Run(release, func(t *testing.T) {
			c := StartForTest(t, WithRelease(release))
			status, contentType := openStatus(t, http.MethodGet, c.URL()+"/api/v1/sse/targets?store=state")
			if !mustParseRelease(release).atLeast(release044) {
				a := call(t, http.MethodGet, c.URL()+"/api/v1/sse/targets?store=state", "")
				if a.status != http.StatusNotFound || a.body != noRoute {
					t.Fatalf("GET /api/v1/sse/targets on %s = %d %q, want 404 %q", release, a.status, a.body, noRoute)
				}
				return
			}
			if status != http.StatusOK || contentType != "text/event-stream" {
				t.Fatalf("GET /api/v1/sse/targets on %s = %d %s, want a 200 event stream", release, status, contentType)
			}
		})
	}
}

// Before v0.47.0 the route reads no body at all: a body that is not JSON is answered as a good one.
func TestBeforeV047TheConfigStateRouteNeverReadsItsBody(t *testing.T) {
	c := StartForTest(t, WithRelease("0.46.0"))
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	for _, body := range []string{`{"state":"disabled"}`, `not json`} {
		a := call(t, http.MethodPost, c.URL()+"/api/v1/config/targets/r1/state", body)
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, "target state is required") {
			t.Errorf("POST /config/targets/r1/state %q = %d %q, want 400 target state is required", body, a.status, a.body)
		}
	}
	if s := status(t, c, "r1"); s.State != StateRunning {
		t.Fatalf("r1 is %s, want running: the call changes nothing", s.State)
	}
}

func TestTheTargetsAnswerHasTheShapeOfTheRelease(t *testing.T) {
	body := config(map[string]string{"r1": good("r1", "a:1") + `,"password":"hunter2","subscriptions":["sub1"]`})
	for _, tt := range []struct {
		release, want string
	}{
		// v0.43.0: the state is a string, subscriptions beside it, the password in clear.
		{"0.43.0", `"subscriptions":{"sub1":{"name":"sub1","state":"running"}},"state":"running"}`},
		{"0.45.0", `"password":"hunter2"`},
		{"0.46.0", `"password":"****"`},
		{"0.47.0", `"state":{"intended-state":"enabled","state":"running"`},
	} {
		t.Run(tt.release, func(t *testing.T) {
			c := StartForTest(t, WithRelease(tt.release))
			mustApply(t, c, body)
			a := call(t, http.MethodGet, c.URL()+"/api/v1/targets", "")
			if a.status != http.StatusOK || !strings.Contains(a.body, tt.want) {
				t.Fatalf("GET /api/v1/targets on %s = %d %s, want it to hold %s", tt.release, a.status, a.body, tt.want)
			}
			cfg := call(t, http.MethodGet, c.URL()+"/api/v1/config/targets/r1", "")
			masked := strings.Contains(cfg.body, `"password":"****"`)
			if wantMasked := mustParseRelease(tt.release).atLeast(release046); masked != wantMasked {
				t.Fatalf("GET /api/v1/config/targets/r1 on %s = %s: masked %v, want %v", tt.release, cfg.body, masked, wantMasked)
			}
		})
	}
}

func TestBeforeV0441AnApplyNeedsTargetsOrInputs(t *testing.T) {
	outputsOnly := `{"outputs":{"o1":{"type":"file","filename":"/tmp/x"}}}`
	matchesOnly := `{"tunnel-target-matches":{"m1":{"id":".*","type":".*"}}}`
	refused := want400(`validate error: at least one of targets or inputs is required`)
	for _, tt := range []struct {
		release, body string
		status        int
		body400       string
	}{
		{"0.43.0", outputsOnly, http.StatusBadRequest, refused},
		{"0.44.0", outputsOnly, http.StatusBadRequest, refused},
		{"0.44.1", outputsOnly, http.StatusOK, ""},
		// v0.44.0's reset check ignores tunnel-target-matches: a body of them alone is a reset, stored as sent.
		{"0.44.0", matchesOnly, http.StatusOK, ""},
		{"0.44.1", matchesOnly, http.StatusBadRequest,
			want400(`validate error: if tunnel-target-matches are provided, at least one subscription is required`)},
		{"0.47.0", outputsOnly, http.StatusOK, ""},
	} {
		t.Run(tt.release, func(t *testing.T) {
			c := StartForTest(t, WithRelease(tt.release))
			if a := apply(t, c, tt.body); a.status != tt.status || a.body != tt.body400 {
				t.Fatalf("apply %s on %s = %d %q, want %d %q", tt.body, tt.release, a.status, a.body, tt.status, tt.body400)
			}
		})
	}
}

func want400(message string) string { return `{"errors":["` + message + `"]}` + "\n" }

func TestBeforeV047ADeviceThatMatchesARuleIsIgnored(t *testing.T) {
	for _, release := range releases {
		t.Run(release, func(t *testing.T) {
			c := StartForTest(t, WithRelease(release))
			addr := startTunnel(t, c, nil)
			a := apply(t, c, tunnelConfig(map[string]string{"leaves": leafMatch}))
			if wantStatus := byRelease(t, release, map[string]int{"0.42.0": http.StatusNotFound, "0.43.0": http.StatusOK}); a.status != wantStatus {
				t.Fatalf("apply on %s = %d %q, want %d", release, a.status, a.body, wantStatus)
			}
			d := dialIn(t, addr, nil, "leaf-1", "GNMI_GNOI")
			waitFor(t, "leaf-1 registered", func() bool { _, ok := c.TunnelDevices()["leaf-1"]; return ok })

			_, matched := c.TargetStatus("leaf-1")
			if want := mustParseRelease(release).atLeast(release047); matched != want {
				t.Fatalf("on %s leaf-1 is a target: %v, want %v (targets %v)", release, matched, want, c.Targets())
			}
			select {
			case <-d.Done():
				t.Fatalf("on %s the tunnel of an ignored device ended: %v; gNMIc accepts its registration", release, d.Err())
			default:
			}
		})
	}
}

func TestEachReleaseRegistersItsOutputTypes(t *testing.T) {
	type want struct{ clickhouse, otlp string } // "" is no state at all
	unknown := componentFailed + ": unknown output type: clickhouse"
	for _, release := range releases {
		t.Run(release, func(t *testing.T) {
			c := StartForTest(t, WithRelease(release))
			a := apply(t, c, withOutputs(`"ch":{"type":"clickhouse"},"ot":{"type":"otlp"}`))
			w := byRelease(t, release, map[string]want{
				"0.42.0": {},                          // no apply route: nothing is ever pushed
				"0.43.0": {"", componentRunning},      // createOutput logs an unknown type and tracks nothing
				"0.44.0": {unknown, componentRunning}, // setOutputState(failed, "unknown output type: ...")
				"0.47.0": {componentRunning, componentRunning},
			})
			if wantStatus := byRelease(t, release, map[string]int{"0.42.0": http.StatusNotFound, "0.43.0": http.StatusOK}); a.status != wantStatus {
				t.Fatalf("apply on %s = %d %q, want %d", release, a.status, a.body, wantStatus)
			}
			states := c.OutputStates()
			shown := func(name string) string {
				st, ok := states[name]
				switch {
				case !ok:
					return ""
				case st.FailedReason != "":
					return st.State + ": " + st.FailedReason
				}
				return st.State
			}
			if got := shown("ch"); got != w.clickhouse {
				t.Errorf("on %s clickhouse is %q, want %q", release, got, w.clickhouse)
			}
			if got := shown("ot"); got != w.otlp {
				t.Errorf("on %s otlp is %q, want %q", release, got, w.otlp)
			}
		})
	}
}

func TestStanIsAnOutputTypeOfV042Only(t *testing.T) {
	if !mustParseRelease("0.42.0").registers(kindOutputs, "stan") || mustParseRelease("0.42.1").registers(kindOutputs, "stan") ||
		mustParseRelease("0.42.0").registers(kindOutputs, "otlp") || !mustParseRelease("0.43.0").registers(kindOutputs, "otlp") {
		t.Fatal("stan is registered in v0.42.0 only, otlp from v0.43.0 (pkg/outputs/all/all.go)")
	}
}
