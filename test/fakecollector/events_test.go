package fakecollector

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stream reads Server-Sent Events lines from the collector.
type stream struct {
	lines chan string
}

func openStream(t *testing.T, url string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &stream{lines: make(chan string, 100)}
	go func() {
		defer resp.Body.Close()
		defer close(s.lines)
		scanner := bufio.NewScanner(resp.Body)
		for scanner.Scan() {
			s.lines <- scanner.Text()
		}
	}()
	return s
}

// next returns the next data event, skipping other lines.
func (s *stream) next(t *testing.T) event {
	t.Helper()
	for {
		line := s.nextLine(t)
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev event
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			return ev
		}
	}
}

func (s *stream) nextLine(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			t.Fatal("stream closed")
		}
		return line
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting for an event")
	}
	return ""
}

func (s *stream) closed(t *testing.T) bool {
	t.Helper()
	for {
		select {
		case _, ok := <-s.lines:
			if !ok {
				return true
			}
		case <-time.After(5 * time.Second):
			return false
		}
	}
}

func stateOf(t *testing.T, ev event) TargetStatus {
	t.Helper()
	raw, _ := json.Marshal(ev.Object)
	var s TargetStatus
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTheStateStreamStartsWithOneCreatePerTargetThenFollowsChanges(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"a": good("a", "a:1"), "b": good("b", "b:1")}))
	s := openStream(t, c.URL()+"/api/v1/sse/targets?store=state")

	for _, name := range []string{"a", "b"} {
		ev := s.next(t)
		if ev.EventType != eventCreate || ev.Name != name || ev.Store != storeState || ev.Kind != kindTargets || !stateOf(t, ev).Collecting() {
			t.Fatalf("initial event = %+v, want create of collecting %s", ev, name)
		}
	}
	c.FailStart("c", "refused")
	mustApply(t, c, config(map[string]string{"a": good("a", "a:1"), "c": good("c", "c:1")}))

	want := []struct{ eventType, name, state string }{
		{eventDelete, "b", StateRunning},
		{eventCreate, "c", StateStarting},
		{eventUpdate, "c", StateFailed},
	}
	for _, w := range want {
		ev := s.next(t)
		if ev.EventType != w.eventType || ev.Name != w.name || stateOf(t, ev).State != w.state {
			t.Fatalf("event = %s %s %s, want %s %s %s", ev.EventType, ev.Name, stateOf(t, ev).State, w.eventType, w.name, w.state)
		}
	}
}

func TestTheConfigStreamCarriesConfigEvents(t *testing.T) {
	c := StartForTest(t)
	s := openStream(t, c.URL()+"/api/v1/sse/subscriptions?store=config")
	mustApply(t, c, `{"subscriptions":{"sub1":{"name":"sub1"}}}`)
	if ev := s.next(t); ev.EventType != eventCreate || ev.Store != storeConfig || ev.Name != "sub1" {
		t.Fatalf("event = %+v", ev)
	}
}

func TestTheStreamSendsKeepaliveComments(t *testing.T) {
	c := StartForTest(t, WithKeepalive(20*time.Millisecond))
	s := openStream(t, c.URL()+"/api/v1/sse/targets?store=state")
	for {
		if line := s.nextLine(t); line == ": keepalive" {
			return
		}
	}
}

func TestTheStreamEndsWhenTheCollectorCloses(t *testing.T) {
	c := New()
	if err := c.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	s := openStream(t, c.URL()+"/api/v1/sse/targets?store=state")
	_ = c.Close()
	if !s.closed(t) {
		t.Fatal("stream still open after Close")
	}
}

func TestTheStreamRejectsUnknownKindsAndStores(t *testing.T) {
	c := StartForTest(t)
	for _, path := range []string{"/api/v1/sse/routers?store=state", "/api/v1/sse/targets?store=disk"} {
		if a := call(t, http.MethodGet, c.URL()+path, ""); a.status != http.StatusBadRequest || len(errorsOf(t, a)) != 1 {
			t.Errorf("%s: got %d %s, want 400 with an error", path, a.status, a.body)
		}
	}
}
