package gnmic_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

func TestWatchTargetsDeliversTheSnapshotThenChanges(t *testing.T) {
	collector := fakecollector.StartForTest(t, fakecollector.WithKeepalive(10*time.Millisecond))
	client := newClient(t, collector.URL())
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	if err := client.Apply(ctx, twoRouters()); err != nil {
		t.Fatal(err)
	}

	events := make(chan gnmic.TargetEvent, 100)
	done := make(chan error, 1)
	connected, alive := make(chan struct{}), make(chan struct{}, 1000)
	var early atomic.Bool
	go func() {
		done <- client.WatchTargets(ctx, func(ev gnmic.TargetEvent) {
			select {
			case <-connected:
			default:
				early.Store(true)
			}
			events <- ev
		},
			gnmic.OnConnected(func() { close(connected) }),
			gnmic.OnAlive(func() { alive <- struct{}{} }))
	}()
	select {
	case <-connected:
	case <-time.After(5 * time.Second):
		t.Fatal("not told the stream connected")
	}

	next := func() gnmic.TargetEvent {
		select {
		case ev := <-events:
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event")
		}
		return gnmic.TargetEvent{}
	}
	for _, name := range []string{"ns/r1", "ns/r2"} {
		if ev := next(); ev.Type != gnmic.EventCreate || ev.Name != name || !ev.Object.Collecting() {
			t.Fatalf("snapshot event = %+v, want create of collecting %s", ev, name)
		}
	}
	cfg := twoRouters()
	delete(cfg.Targets, "ns/r1")
	if err := client.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Type != gnmic.EventDelete || ev.Name != "ns/r1" || ev.Store != "state" || ev.Kind != "targets" {
		t.Fatalf("event = %+v, want delete of ns/r1", ev)
	}

	// Keepalives every 10 ms: the stream is seen alive beyond its three events.
	deadline := time.After(5 * time.Second)
	for seen := 0; seen < 6; seen++ {
		select {
		case <-alive:
		case <-deadline:
			t.Fatalf("stream seen alive %d times, want keepalives beyond the 3 events", seen)
		}
	}

	if early.Load() {
		t.Error("an event arrived before the stream was said connected")
	}

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("WatchTargets after cancel = %v, want context.Canceled", err)
	}
}

func TestWatchTargetsReportsAStreamClosedByTheCollector(t *testing.T) {
	collector := fakecollector.New()
	if err := collector.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	client := newClient(t, collector.URL())
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		done <- client.WatchTargets(testContext(t), func(gnmic.TargetEvent) {})
	}()
	go func() {
		for len(collector.Requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		close(started)
	}()
	<-started
	_ = collector.Close()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want the stream reported closed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WatchTargets did not return")
	}
}

func TestWatchComponentsDeliversOutputStatesWithTheirFailures(t *testing.T) {
	collector := fakecollector.StartForTest(t)
	client := newClient(t, collector.URL())
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	cfg := twoRouters()
	cfg.Outputs = map[string]map[string]any{
		"ok":    {"name": "ok", "type": "file", "filename": "/ok"},
		"proto": {"name": "proto", "type": "file", "filename": "/p", "format": "proto"},
	}
	if err := client.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	events := make(chan gnmic.ComponentEvent, 100)
	go func() {
		_ = client.WatchComponents(ctx, gnmic.KindOutputs, func(ev gnmic.ComponentEvent) { events <- ev })
	}()
	next := func() gnmic.ComponentEvent {
		select {
		case ev := <-events:
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event")
		}
		return gnmic.ComponentEvent{}
	}
	if ev := next(); ev.Name != "ok" || ev.Kind != gnmic.KindOutputs || ev.Object.Failed() || ev.Object.State != gnmic.StateRunning {
		t.Fatalf("first event = %+v, want output ok running", ev)
	}
	if ev := next(); ev.Name != "proto" || !ev.Object.Failed() || ev.Object.FailedReason != "proto format not supported in output type 'file'" {
		t.Fatalf("second event = %+v, want output proto failed with the collector's reason", ev)
	}
	delete(cfg.Outputs, "proto")
	if err := client.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Name != "proto" || ev.Type != gnmic.EventDelete {
		t.Fatalf("event after the removal = %+v, want the delete of proto", ev)
	}
}

// WatchTargetChanges announces every event of the stream, the snapshot's included, without decoding them, and
// ends as WatchTargets does.
func TestWatchTargetChangesAnnouncesEveryEvent(t *testing.T) {
	collector := fakecollector.StartForTest(t)
	client := newClient(t, collector.URL())
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	if err := client.Apply(ctx, twoRouters()); err != nil {
		t.Fatal(err)
	}
	changes := make(chan struct{}, 100)
	connected := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- client.WatchTargetChanges(ctx, func() { changes <- struct{}{} }, gnmic.OnConnected(func() { close(connected) }))
	}()
	<-connected
	expectChanges := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			select {
			case <-changes:
			case <-time.After(5 * time.Second):
				t.Fatalf("%d changes announced, want %d", i, n)
			}
		}
	}
	expectChanges(2) // the snapshot: one create per target
	cfg := twoRouters()
	delete(cfg.Targets, "ns/r1")
	if err := client.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	expectChanges(1) // the delete
	select {
	case <-changes:
		t.Fatal("a change announced beyond the stream's events")
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("WatchTargetChanges after cancel = %v, want context.Canceled", err)
	}
}
