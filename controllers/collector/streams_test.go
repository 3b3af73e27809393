package collector

import (
	"context"
	"crypto/tls"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// opens records which client configuration each attempt to open a stream used.
type opens struct {
	mu   sync.Mutex
	used []string
}

func (o *opens) with(name string) func(*corev1.Pod) (*gnmic.Client, error) {
	return func(*corev1.Pod) (*gnmic.Client, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.used = append(o.used, name)
		return nil, errors.New("unreachable") // the stream reconnects with backoff, from 1 s
	}
}

func (o *opens) all() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.used)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A renewed CA or client certificate gives the Cluster a new client configuration. A stream that went on
// reconnecting with the one it was opened with would fail for ever once the collector serves a certificate of
// the new CA (the pod keeps its UID when only its container restarts), leaving the Cluster to the poll.
func TestStreamsReopenAPodsStreamWhenItsClientTLSChanges(t *testing.T) {
	s := NewStreams(func(types.NamespacedName) {})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = s.Start(ctx) }()
	cluster := types.NamespacedName{Namespace: "ns", Name: "c"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-0", UID: "u0"}}
	before, after := &tls.Config{}, &tls.Config{}
	o := &opens{}

	waitFor(t, "the stream opened with the first configuration", func() bool {
		s.Track(ctx, cluster, []*corev1.Pod{pod}, before, o.with("before"))
		return len(o.all()) > 0
	})

	s.Track(ctx, cluster, []*corev1.Pod{pod}, after, o.with("after"))
	waitFor(t, "the stream opened with the new configuration", func() bool { return slices.Contains(o.all(), "after") })
	reopened := len(o.all())
	time.Sleep(1500 * time.Millisecond) // longer than the first reconnect's backoff
	if got := o.all()[reopened:]; slices.Contains(got, "before") {
		t.Errorf("the stream opened with the old configuration went on reconnecting: %v", o.all())
	}
}

// The collector answers 200 to an apply whose output cannot start; only its output state stream says so. The
// streams keep what it tells, replaced by the snapshot of every new connection.
func TestStreamsKeepTheOutputAndInputStatesTheCollectorStreams(t *testing.T) {
	woken := make(chan types.NamespacedName, 100)
	s := NewStreams(func(c types.NamespacedName) {
		select {
		case woken <- c:
		default:
		}
	})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = s.Start(ctx) }()
	col := fakecollector.StartForTest(t)
	client, err := gnmic.NewClient(col.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := gnmic.Config{Outputs: map[string]map[string]any{
		"proto": {"name": "proto", "type": "file", "filename": "/p", "format": "proto"},
	}}
	if err := client.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	cluster := types.NamespacedName{Namespace: "ns", Name: "c"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-0", UID: "u0"}}
	if _, known := s.Components(pod); known {
		t.Fatal("states known before any stream")
	}
	waitFor(t, "the failed output reported", func() bool {
		s.Track(ctx, cluster, []*corev1.Pod{pod}, nil, func(*corev1.Pod) (*gnmic.Client, error) { return client, nil })
		states, known := s.Components(pod)
		return known && states[gnmic.KindOutputs]["proto"].Failed()
	})
	states, _ := s.Components(pod)
	if got := states[gnmic.KindOutputs]["proto"].FailedReason; got != "proto format not supported in output type 'file'" {
		t.Fatalf("reason = %q", got)
	}
	if len(states[gnmic.KindInputs]) != 0 {
		t.Fatalf("inputs = %v, want none", states[gnmic.KindInputs])
	}
	select {
	case c := <-woken:
		if c != cluster {
			t.Fatalf("woke %v, want %v", c, cluster)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the Cluster was not woken")
	}

	cfg.Outputs["proto"]["format"] = "json"
	if err := client.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fixed output reported running", func() bool {
		states, known := s.Components(pod)
		return known && states[gnmic.KindOutputs]["proto"].State == gnmic.StateRunning
	})
	if err := client.Apply(ctx, gnmic.Config{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed output forgotten", func() bool {
		states, known := s.Components(pod)
		_, still := states[gnmic.KindOutputs]["proto"]
		return known && !still
	})

	// A stopped collector is unknown, not "everything runs".
	if err := col.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the states unknown once the streams broke", func() bool {
		_, known := s.Components(pod)
		return !known
	})
}
