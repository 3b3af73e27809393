package fakecollector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// answer is a response as a test sees it.
type answer struct {
	status      int
	contentType string
	body        string
}

func call(t *testing.T, method, url, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: string(raw)}
}

func apply(t *testing.T, c *Collector, body string) answer {
	t.Helper()
	return call(t, http.MethodPost, c.URL()+"/api/v1/config/apply", body)
}

func mustApply(t *testing.T, c *Collector, body string) Changes {
	t.Helper()
	if a := apply(t, c, body); a.status != http.StatusOK || a.body != "" {
		t.Fatalf("apply: got %d %q, want 200 with an empty body", a.status, a.body)
	}
	last, _ := c.LastApplied()
	return last.Changes
}

// errorsOf decodes gNMIc's {"errors": [...]} body.
func errorsOf(t *testing.T, a answer) []string {
	t.Helper()
	var body apiErrors
	if err := json.Unmarshal([]byte(a.body), &body); err != nil {
		t.Fatalf("error body %q is not JSON: %v", a.body, err)
	}
	return body.Errors
}

// targetViews decodes GET /api/v1/targets and /api/v1/targets/{name}.
func targetViews(t *testing.T, a answer) []targetView {
	t.Helper()
	var views []targetView
	if err := json.Unmarshal([]byte(a.body), &views); err != nil {
		t.Fatalf("targets body %q: %v", a.body, err)
	}
	return views
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func status(t *testing.T, c *Collector, name string) TargetStatus {
	t.Helper()
	s, ok := c.TargetStatus(name)
	if !ok {
		t.Fatalf("target %q is not configured", name)
	}
	return s
}

// config builds an apply body from targets (name -> JSON object body without
// braces) sharing one subscription "sub1".
func config(targets map[string]string) string {
	var b bytes.Buffer
	b.WriteString(`{"subscriptions":{"sub1":{"name":"sub1","paths":["/interfaces"]}},"targets":{`)
	first := true
	for _, name := range sortedKeys(targets) {
		if !first {
			b.WriteString(",")
		}
		first = false
		b.WriteString(`"` + name + `":{` + targets[name] + `}`)
	}
	b.WriteString("}}")
	return b.String()
}

// good is a target body the real collector would start.
func good(name, address string) string {
	return `"name":"` + name + `","address":"` + address + `","timeout":"10s","retry-timer":"10s","insecure":true`
}

// numbered returns n good targets named prefix000, prefix001, ...
func numbered(prefix string, n int) map[string]string {
	targets := make(map[string]string, n)
	for i := range n {
		name := fmt.Sprintf("%s%03d", prefix, i)
		targets[name] = good(name, fmt.Sprintf("10.0.%d.%d:57400", i/250, i%250))
	}
	return targets
}

// union merges target maps; later ones win.
func union(sets ...map[string]string) map[string]string {
	out := make(map[string]string)
	for _, set := range sets {
		for name, body := range set {
			out[name] = body
		}
	}
	return out
}

// running lists GET /api/v1/targets by name.
func running(t *testing.T, c *Collector) map[string]targetView {
	t.Helper()
	views := targetViews(t, call(t, http.MethodGet, c.URL()+"/api/v1/targets", ""))
	out := make(map[string]targetView, len(views))
	for _, v := range views {
		out[v.Name] = v
	}
	return out
}

// configured decodes GET /api/v1/config/targets.
func configured(t *testing.T, c *Collector) map[string]map[string]any {
	t.Helper()
	a := call(t, http.MethodGet, c.URL()+"/api/v1/config/targets", "")
	var objects map[string]map[string]any
	if a.status != http.StatusOK {
		t.Fatalf("GET /api/v1/config/targets: %d %s", a.status, a.body)
	}
	if err := json.Unmarshal([]byte(a.body), &objects); err != nil {
		t.Fatalf("config targets body %q: %v", a.body, err)
	}
	return objects
}

func waitIdle(t *testing.T, c *Collector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
}
