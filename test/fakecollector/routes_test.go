package fakecollector

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAWrongMethodOnAnExistingPathAnswers404(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	for _, tt := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/config/apply"},
		{http.MethodPut, "/api/v1/config/apply"},
		{http.MethodPost, "/api/v1/targets"},
		{http.MethodDelete, "/api/v1/targets/r1"},
		{http.MethodGet, "/api/v1/targets/r1/state/enabled"},
		{http.MethodPost, "/api/v1/healthz"},
		{http.MethodGet, "/api/v1/no-such-path"},
	} {
		if a := call(t, tt.method, c.URL()+tt.path, ""); a.status != http.StatusNotFound {
			t.Errorf("%s %s = %d, want 404", tt.method, tt.path, a.status)
		}
	}
}

func TestRequestsAreRecordedWithReadableBodies(t *testing.T) {
	c := StartForTest(t)
	body := config(map[string]string{"r1": good("r1", "a:1") + `,"password":"hunter2"`})
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte(body))
	_ = zw.Close()
	call(t, http.MethodPost, c.URL()+"/api/v1/config/apply", zipped.String(), "Content-Encoding", "gzip")
	call(t, http.MethodGet, c.URL()+"/api/v1/targets/ns%2Fr1?x=1", "")

	reqs := c.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded, want 2", len(reqs))
	}
	if reqs[0].Method != http.MethodPost || reqs[0].Path != "/api/v1/config/apply" || !strings.Contains(string(reqs[0].Body), "hunter2") {
		t.Errorf("apply record = %s %s %q, want the decompressed body", reqs[0].Method, reqs[0].Path, reqs[0].Body)
	}
	if reqs[1].Path != "/api/v1/targets/ns%2Fr1" || reqs[1].Query != "x=1" {
		t.Errorf("get record = %s ? %s, want the escaped path", reqs[1].Path, reqs[1].Query)
	}
}

func TestTheHandlerServesInProcess(t *testing.T) {
	c := New()
	server := httptest.NewServer(c.Handler())
	defer server.Close()
	defer c.Close()

	resp, err := http.Post(server.URL+"/api/v1/config/apply", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || c.ApplyCount() != 1 {
		t.Fatalf("status %d, %d applies", resp.StatusCode, c.ApplyCount())
	}
}

func TestStartingTwiceFails(t *testing.T) {
	c := StartForTest(t)
	if err := c.Start("127.0.0.1:0"); err == nil {
		t.Fatal("second Start succeeded")
	}
}
