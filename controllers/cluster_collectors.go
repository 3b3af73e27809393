package controllers

import (
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// targetStates is what the collectors say about the targets they hold.
type targetStates struct {
	// byTarget is each target's state on the pod that holds it.
	byTarget map[string]gnmic.TargetStatus
	// allCollecting is true when every target on a ready pod is collecting (connection READY and every
	// subscription running).
	allCollecting bool
	// nextRestart is when a failed target may be restarted again (zero when none waits).
	nextRestart time.Time
}

// collectTargetStates asks every ready collector for the state of its targets, and restarts the ones whose
// start failed: a collector never retries a failed start by itself.
func (r *ClusterReconciler) collectTargetStates(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, pushed pushResults) targetStates {
	logger := log.FromContext(ctx)
	states := targetStates{byTarget: map[string]gnmic.TargetStatus{}, allCollecting: true}
	now := r.now()
	for _, pp := range pushed.pods {
		if pp.err != nil || len(pp.targets) == 0 || !pp.status.Ready {
			continue
		}
		client, err := r.Dialer.Client(cluster, pp.pod, w.clientTLS())
		if err != nil {
			states.allCollecting = false
			continue
		}
		reported, err := client.Targets(ctx)
		if err != nil {
			logger.Error(err, "read target states", "pod", pp.pod.Name)
			states.allCollecting = false
			continue
		}
		seen := map[string]bool{}
		for _, t := range reported {
			if !pp.targets[t.Name] {
				continue
			}
			seen[t.Name] = true
			states.byTarget[t.Name] = t.State
			if !t.State.Collecting() {
				states.allCollecting = false
			}
			if !t.State.Failed() {
				r.restarts.forget(cluster, t.Name)
				continue
			}
			key := restartKey(cluster, t.Name)
			if due := r.restarts.due(key, now); !due.IsZero() {
				states.nextRestart = earliest(states.nextRestart, due)
				continue
			}
			err := client.EnableTarget(ctx, t.Name)
			due := r.restarts.attempted(key, now)
			states.nextRestart = earliest(states.nextRestart, due)
			logger.Info("restarting target whose start failed", "pod", pp.pod.Name, "target", t.Name,
				"reason", t.State.FailedReason, "error", errString(err))
		}
		if len(seen) < len(pp.targets) {
			states.allCollecting = false
		}
	}
	return states
}

// restartBackoff spaces the restarts of a failed target: 1s, 2s, 4s … up to 5 minutes.
type restartBackoff struct {
	mu       sync.Mutex
	attempts map[string]int
	next     map[string]time.Time
}

const (
	restartBackoffBase = time.Second
	restartBackoffMax  = 5 * time.Minute
)

func restartKey(cluster *operatorv1alpha1.Cluster, target string) string {
	return cluster.Namespace + "/" + cluster.Name + "/" + target
}

// due is zero when the target may be restarted now, else when it may.
func (b *restartBackoff) due(key string, now time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if next, ok := b.next[key]; ok && now.Before(next) {
		return next
	}
	return time.Time{}
}

// attempted records a restart and returns when the next one may happen.
func (b *restartBackoff) attempted(key string, now time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.attempts == nil {
		b.attempts, b.next = map[string]int{}, map[string]time.Time{}
	}
	delay := restartBackoffBase << min(b.attempts[key], 16)
	delay = min(delay, restartBackoffMax)
	b.attempts[key]++
	b.next[key] = now.Add(delay)
	return b.next[key]
}

func (b *restartBackoff) forget(cluster *operatorv1alpha1.Cluster, target string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := restartKey(cluster, target)
	delete(b.attempts, key)
	delete(b.next, key)
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
