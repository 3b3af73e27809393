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
