package controllers

import (
	"context"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// collectorRuntimes are the collectors' reports by pod ordinal.
type collectorRuntimes map[int]collector.Runtime

// runs tells whether the collector of the pod lists the target, and its state there.
func (c collectorRuntimes) runs(ordinal int, target string) (gnmic.TargetStatus, bool) {
	rt := c[ordinal]
	if !rt.Known {
		return gnmic.TargetStatus{}, false
	}
	st, ok := rt.Targets[target]
	return st, ok
}

// pushablePods are the pods the operator pushes to, in ordinal order: the ready pods of the desired ordinals,
// and ready pods beyond the desired replicas (being scaled away), which are emptied before their targets
// start elsewhere.
func pushablePods(w *world, plan placementPlan) []int {
	out := append([]int(nil), plan.availability.Ready...)
	for ordinal, pod := range w.pods {
		if _, lost := w.lost[ordinal]; w.isDesired(ordinal) || lost {
			continue
		}
		if ready, _ := podReadiness(pod); ready {
			out = append(out, ordinal)
		}
	}
	sort.Ints(out)
	return out
}

// readCollectors gives what the collector of every pod the operator pushes to runs. Only the collector's own
// state proves that a change was acted on (an apply is acknowledged before it is), so a collector is asked
// unless its last answer still holds (unchangedCollector).
func (r *ClusterReconciler) readCollectors(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, ordinals []int) collectorRuntimes {
	out := collectorRuntimes{}
	var ask []int
	for _, ordinal := range ordinals {
		if rt, ok := r.unchangedCollector(w.pods[ordinal]); ok {
			out[ordinal] = rt
			continue
		}
		ask = append(ask, ordinal)
	}
	for ordinal, rt := range r.askCollectors(ctx, cluster, w, ask) {
		out[ordinal] = rt
	}
	return out
}

// unchangedCollector is the pod's collector's last answer when it still holds: the collector's event stream
// announced no change since it was read, the collector had nothing outstanding then (it ran exactly what it
// acknowledged, nothing still starting), and the answer is younger than the poll interval. A steady fleet is
// then read once per poll, and a reconcile caused by one collector's events reads that collector alone.
func (r *ClusterReconciler) unchangedCollector(pod *corev1.Pod) (collector.Runtime, bool) {
	if r.streams == nil || pod == nil {
		return collector.Runtime{}, false
	}
	e := r.ledger.Entry(pod)
	if e.ReadAt.IsZero() || !e.Settled() || r.now().Sub(e.ReadAt) >= r.pollInterval()*9/10 {
		return collector.Runtime{}, false
	}
	if !r.streams.Quiet(pod, time.Now()) {
		return collector.Runtime{}, false
	}
	return e.Read, true
}

// askCollectors asks the collectors of the pods which targets they run; one that cannot be read is left out.
func (r *ClusterReconciler) askCollectors(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, ordinals []int) collectorRuntimes {
	logger := log.FromContext(ctx)
	out := collectorRuntimes{}
	for _, ordinal := range ordinals {
		pod := w.pods[ordinal]
		client, err := r.Dialer.Client(cluster, pod, w.clientTLS())
		if err != nil {
			logger.Error(err, "reach collector", "pod", pod.Name)
			continue
		}
		if r.streams != nil {
			r.streams.MarkRead(pod) // events from now on are news to the next reconcile
		}
		reported, err := client.Targets(ctx)
		if err != nil {
			logger.Error(err, "read target states", "pod", pod.Name)
			continue
		}
		rt := collector.Runtime{Known: true, Targets: make(map[string]gnmic.TargetStatus, len(reported))}
		for _, t := range reported {
			rt.Targets[t.Name] = t.State
		}
		out[ordinal] = rt
		r.ledger.NoteRead(pod, rt, r.now())
	}
	return out
}

// heldByTerminatingPods are the targets that the collectors of terminating pods may still run: a pod keeps
// running for its termination grace period after its deletion, and a target it runs must not start
// elsewhere before it stops (or the drop timeout passes). Their collectors are read, never pushed; one that
// cannot be read holds what it ran or was sent last.
func (r *ClusterReconciler) heldByTerminatingPods(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) []string {
	var held []string
	for _, pod := range w.terminating {
		if ready, _ := podReadiness(pod); !ready {
			continue
		}
		client, err := r.Dialer.Client(cluster, pod, w.clientTLS())
		var reported []gnmic.TargetState
		if err == nil {
			reported, err = client.Targets(ctx)
		}
		if err != nil {
			held = append(held, r.ledger.LastRunning(pod)...)
			continue
		}
		for _, t := range reported {
			held = append(held, t.Name)
		}
	}
	return held
}

// rereadPushed reads again the collectors this reconcile pushed to, so that the statuses it writes show what
// they run after the push: targets a collector starts at once are reported running in one write.
func (r *ClusterReconciler) rereadPushed(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world,
	runtimes collectorRuntimes, pushed pushResults) {
	var ordinals []int
	for ordinal, pp := range pushed.pods {
		if pp.pushed {
			ordinals = append(ordinals, ordinal)
		}
	}
	for ordinal, rt := range r.askCollectors(ctx, cluster, w, ordinals) {
		runtimes[ordinal] = rt
	}
}

// restartFailedTargets restarts the targets whose start failed on the collector they were sent to: a
// collector never retries a failed start by itself. Restarts are spaced by a backoff per target; the result
// is when the next one falls due (zero when none waits). The collector answers a restart before trying it,
// so its success shows only in a later read of the collector's state.
func (r *ClusterReconciler) restartFailedTargets(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world,
	runtimes collectorRuntimes, pushed pushResults) time.Time {
	logger := log.FromContext(ctx)
	now := r.now()
	var next time.Time
	for ordinal, pp := range pushed.pods {
		if pp.err != nil || !pp.considered {
			continue
		}
		sent := setOf(pp.step.Send)
		for name, st := range runtimes[ordinal].Targets {
			if !sent[name] {
				continue
			}
			key := restartKey(cluster, name)
			if !st.Failed() {
				r.restarts.forget(key)
				continue
			}
			if due := r.restarts.due(key, now); !due.IsZero() {
				next = earliest(next, due)
				continue
			}
			client, err := r.Dialer.Client(cluster, pp.pod, w.clientTLS())
			if err == nil {
				err = client.EnableTarget(ctx, name)
			}
			next = earliest(next, r.restarts.attempted(key, now))
			logger.Info("restarting target whose start failed", "pod", pp.pod.Name, "target", name,
				"reason", st.FailedReason, "error", err)
		}
	}
	return next
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

func (b *restartBackoff) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.attempts, key)
	delete(b.next, key)
}

// forgetCluster drops the backoff of every target of a deleted Cluster.
func (b *restartBackoff) forgetCluster(namespace, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prefix := namespace + "/" + name + "/"
	for key := range b.next {
		if len(key) > len(prefix) && key[:len(prefix)] == prefix {
			delete(b.attempts, key)
			delete(b.next, key)
		}
	}
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func setOf(names []string) map[string]bool {
	s := make(map[string]bool, len(names))
	for _, n := range names {
		s[n] = true
	}
	return s
}
