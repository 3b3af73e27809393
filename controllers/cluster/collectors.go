package cluster

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
func (r *Reconciler) readCollectors(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, ordinals []int) collectorRuntimes {
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
func (r *Reconciler) unchangedCollector(pod *corev1.Pod) (collector.Runtime, bool) {
	if r.streams == nil || pod == nil {
		return collector.Runtime{}, false
	}
	e := r.ledger.Entry(pod)
	if e.ReadAt.IsZero() || !e.Settled() || r.now().Sub(e.ReadAt) >= r.PollInterval*9/10 {
		return collector.Runtime{}, false
	}
	if !r.streams.Quiet(pod, time.Now()) {
		return collector.Runtime{}, false
	}
	return e.Read, true
}

// askCollectors asks the collectors of the pods which targets they run; one that cannot be read is left out.
func (r *Reconciler) askCollectors(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, ordinals []int) collectorRuntimes {
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
		rt := runtimeOf(reported)
		if last := r.ledger.Entry(pod); !last.ReadAt.IsZero() && rt.SameRead(last.Read) {
			rt = last.Read // it says what the last read said: what was worked out of that one stands
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
func (r *Reconciler) heldByTerminatingPods(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) []string {
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
			if t.TunnelTargetType() == "" { // a dial-in device is never placed elsewhere
				held = append(held, t.Name)
			}
		}
	}
	return held
}

// rereadPushed reads again the collectors this reconcile pushed to, so that the statuses it writes show what
// they run after the push: targets a collector starts at once are reported running in one write.
func (r *Reconciler) rereadPushed(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world,
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

// followCollectors keeps an event stream open to every collector pod the operator pushes to: their events
// (a target started, failed or removed) wake the Cluster.
func (r *Reconciler) followCollectors(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, ordinals []int) {
	if r.streams == nil {
		return
	}
	var ready []*corev1.Pod
	for _, o := range ordinals {
		if p := w.pods[o]; p != nil {
			ready = append(ready, p)
		}
	}
	c, tlsConfig := cluster.DeepCopy(), w.clientTLS()
	r.streams.Track(ctx, client.ObjectKeyFromObject(cluster), ready, tlsConfig, func(p *corev1.Pod) (*gnmic.Client, error) {
		return r.Dialer.StreamClient(c, p, tlsConfig)
	})
}
