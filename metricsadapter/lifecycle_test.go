package metricsadapter

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"
)

func TestWaitReturnsAtOnceWhenNoServerRuns(t *testing.T) {
	var off *Server // Setup's answer when both APIs are switched off
	if err := off.Wait(context.Background()); err != nil {
		t.Fatalf("nil server: %v", err)
	}
	never := &Server{}
	if err := never.Wait(context.Background()); err != nil {
		t.Fatalf("a server that never started: %v", err)
	}
	if never.launched(func(context.Context) error { return nil }, make(chan struct{})) {
		t.Fatal("a server whose operator already waited for it must not start")
	}
}

func TestWaitReturnsOnceTheServerStoppedOrItsContextEnds(t *testing.T) {
	s := &Server{}
	stopped := make(chan struct{})
	if !s.launched(func(context.Context) error { return nil }, stopped) {
		t.Fatal("not launched")
	}
	short, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := s.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("server still running: want the context's end, got %v", err)
	}
	close(stopped)
	if err := s.Wait(context.Background()); err != nil {
		t.Fatalf("server stopped: %v", err)
	}
}

func TestReadyFollowsTheServerFromStartToDrain(t *testing.T) {
	s := &Server{}
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := s.Ready(req); err == nil {
		t.Fatal("ready before the server runs")
	}
	answer := errors.New("metrics API /readyz answered 500")
	s.launched(func(context.Context) error { return answer }, make(chan struct{}))
	if err := s.Ready(req); !errors.Is(err, answer) {
		t.Fatalf("want the server's own answer, got %v", err)
	}
	answer = nil
	if err := s.Ready(req); err != nil {
		t.Fatalf("serving: %v", err)
	}
	s.drain()
	if err := s.Ready(req); err == nil {
		t.Fatal("ready while draining")
	}
}

func TestFailedChecksNamesTheFailingOnes(t *testing.T) {
	body := "[+]ping ok\n[+]log ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"
	if got := failedChecks(body); got != "shutdown failed: reason withheld" {
		t.Fatalf("got %q", got)
	}
}
