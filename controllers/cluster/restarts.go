package cluster

import (
	"context"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// restartFailedTargets restarts the targets whose start failed on the collector they were sent to: a
// collector never retries a failed start by itself. Restarts are spaced by a backoff per target; the result
// is when the next one falls due (zero when none waits). The collector answers a restart before trying it,
// so its success shows only in a later read of the collector's state.
func (r *Reconciler) restartFailedTargets(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world,
	runtimes collectorRuntimes, pushed pushResults) time.Time {
	logger := log.FromContext(ctx)
	now := r.now()
	restarts := &r.memoryOf(client.ObjectKeyFromObject(cluster)).restarts
	var next time.Time
	for ordinal, pp := range pushed.pods {
		if pp.err != nil || !pp.considered {
			continue
		}
		var sent map[string]bool // made for the first target with a failure or a backoff to forget
		rt := runtimes[ordinal]
		// The targets it lists that failed, and those with a restart on record: no other is acted on.
		for _, name := range restarts.withFailed(rt.FailedNames()) {
			st, listed := rt.Targets[name]
			if !listed {
				continue
			}
			failed := st.Failed()
			if !failed && !restarts.tracks(name) {
				continue
			}
			if sent == nil {
				sent = setOf(pp.step.Send)
			}
			if !sent[name] {
				continue
			}
			if !failed {
				restarts.forget(name)
				continue
			}
			if due := restarts.due(name, now); !due.IsZero() {
				next = earliest(next, due)
				continue
			}
			client, err := r.Dialer.Client(cluster, pp.pod, w.clientTLS())
			if err == nil {
				err = client.EnableTarget(ctx, name)
			}
			next = earliest(next, restarts.attempted(name, now))
			logger.Info("restarting target whose start failed", "pod", pp.pod.Name, "target", name,
				"reason", st.FailedReason, "error", err)
		}
	}
	return next
}

// restartBackoff spaces the restarts of a Cluster's failed targets, by target: 1s, 2s, 4s … up to 5 minutes. It
// is part of the Cluster's memory, which only its reconcile touches: an entry goes when its target runs, and
// all go with the Cluster.
type restartBackoff struct {
	attempts map[string]int
	next     map[string]time.Time
}

const (
	restartBackoffBase = time.Second
	restartBackoffMax  = 5 * time.Minute
)

// due is zero when the target may be restarted now, else when it may.
func (b *restartBackoff) due(target string, now time.Time) time.Time {
	if next, ok := b.next[target]; ok && now.Before(next) {
		return next
	}
	return time.Time{}
}

// attempted records a restart and returns when the next one may happen.
func (b *restartBackoff) attempted(target string, now time.Time) time.Time {
	if b.attempts == nil {
		b.attempts, b.next = map[string]int{}, map[string]time.Time{}
	}
	delay := restartBackoffBase << min(b.attempts[target], 16)
	delay = min(delay, restartBackoffMax)
	b.attempts[target]++
	b.next[target] = now.Add(delay)
	return b.next[target]
}

// withFailed is failed and the targets with a restart on record, each once.
func (b *restartBackoff) withFailed(failed []string) []string {
	if len(b.attempts) == 0 {
		return failed
	}
	out := slices.Clone(failed)
	for name := range b.attempts {
		if _, found := slices.BinarySearch(failed, name); !found {
			out = append(out, name)
		}
	}
	return out
}

// tracks tells whether the target has a restart on record.
func (b *restartBackoff) tracks(target string) bool {
	_, ok := b.attempts[target]
	return ok
}

func (b *restartBackoff) forget(target string) {
	delete(b.attempts, target)
	delete(b.next, target)
}
