//go:build e2e

package e2e_test

import (
	"context"
	"sync"
	"time"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// replicaTracker samples a Cluster's spec.replicas every 250 ms and remembers every change.
type replicaTracker struct {
	mu      sync.Mutex
	peak    int32
	history []int32
	stop    context.CancelFunc
	done    chan struct{}
}

func trackReplicas(fleet harness.Fleet) *replicaTracker {
	trackCtx, stop := context.WithCancel(ctx)
	t := &replicaTracker{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		ticker := time.NewTicker(250 * time.Millisecond)
		defer ticker.Stop()
		for {
			if s, err := fleet.Observe(trackCtx, cp, k8sClient, ""); err == nil {
				t.record(s.Replicas)
			}
			select {
			case <-trackCtx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return t
}

func (t *replicaTracker) record(replicas int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if replicas > t.peak {
		t.peak = replicas
	}
	if n := len(t.history); n == 0 || t.history[n-1] != replicas {
		t.history = append(t.history, replicas)
	}
}

// Stop ends sampling and returns the highest replicas seen and the sequence of distinct values.
func (t *replicaTracker) Stop() (peak int32, history []int32) {
	t.stop()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.peak, append([]int32(nil), t.history...)
}
