package cluster

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// wakes is the one way a Cluster is reconciled for a reason no watch of a Cluster's objects carries: its
// collectors' events (soon), a time its reconcile named (when a refusing pod's grace period ends), sharding's
// handovers (now), and bursts of Target changes (spaced by burstWindow). It is a source of the Cluster
// controller: every wake is an add to the controller's queue, which keeps the earliest of a Cluster's pending
// wakes and never runs two reconciles of one Cluster at once.
//
// Its forgetting rule: a Cluster's burst window goes with forget.
type wakes struct {
	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	// early are the wakes asked for before the controller started, each with when it falls due.
	early map[types.NamespacedName]time.Time
	// lastBurst is when each Cluster was last woken by a burst of Target changes (types.NamespacedName ->
	// time.Time).
	lastBurst sync.Map
}

// wakeCoalescing is how long a Cluster's wake by its collectors waits for more of their events: a burst of
// events (a batch of targets starting, the restarts of failed targets) wakes the Cluster once, and the
// reconcile it causes reads every collector anyway.
const wakeCoalescing = 200 * time.Millisecond

// burstWindow is how often a burst of Target changes wakes a Cluster: the first change of a quiet Cluster
// wakes it at once, the next ones within the window wake it once, at the window's end. Thousands of Targets
// created at once then cost a reconcile a second, not one per reconcile's worth of arrivals, each of them
// rendering the whole fleet and writing the Cluster's and its Pipelines' counts.
const burstWindow = time.Second

func newWakes() *wakes { return &wakes{early: map[types.NamespacedName]time.Time{}} }

// Start implements source.Source: the wakes asked for so far go into the controller's queue.
func (w *wakes) Start(_ context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = queue
	for key, at := range w.early {
		queue.AddAfter(reconcile.Request{NamespacedName: key}, time.Until(at))
	}
	w.early = nil
	return nil
}

func (w *wakes) String() string { return "wakes of Clusters" }

// at reconciles the Cluster at the given time, at once when it has passed.
func (w *wakes) at(cluster types.NamespacedName, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil {
		if was, ok := w.early[cluster]; !ok || at.Before(was) {
			w.early[cluster] = at
		}
		return
	}
	w.queue.AddAfter(reconcile.Request{NamespacedName: cluster}, time.Until(at))
}

// now reconciles the Cluster at once.
func (w *wakes) now(cluster types.NamespacedName) { w.at(cluster, time.Now()) }

// soon reconciles the Cluster wakeCoalescing from now, with whatever else happens to it meanwhile.
func (w *wakes) soon(cluster types.NamespacedName) { w.at(cluster, time.Now().Add(wakeCoalescing)) }

// bursts maps Target watch events to the Clusters they concern and spaces each Cluster's wakes by burstWindow.
func (w *wakes) bursts(mapper handler.MapFunc) handler.EventHandler {
	wake := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		now := time.Now()
		seen := map[types.NamespacedName]bool{}
		for _, obj := range objs {
			for _, req := range mapper(ctx, obj) {
				if seen[req.NamespacedName] {
					continue
				}
				seen[req.NamespacedName] = true
				q.AddAfter(req, w.burstDelay(req.NamespacedName, now))
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, q, e.Object)
		},
	}
}

// burstDelay is how long the Cluster's wake by a Target change waits: nothing when its last such wake is a
// window ago; until the wake already scheduled, when there is one; else until a window after the last wake.
// The queue keeps the earliest of a request's pending wakes, so a burst leaves one per window.
func (w *wakes) burstDelay(cluster types.NamespacedName, now time.Time) time.Duration {
	if v, ok := w.lastBurst.Load(cluster); ok {
		last := v.(time.Time)
		if !last.Before(now) {
			return last.Sub(now)
		}
		if now.Sub(last) < burstWindow {
			at := last.Add(burstWindow)
			w.lastBurst.Store(cluster, at)
			return at.Sub(now)
		}
	}
	w.lastBurst.Store(cluster, now)
	return 0
}

// forget drops what the wakes remember of a Cluster: its burst window.
func (w *wakes) forget(cluster types.NamespacedName) { w.lastBurst.Delete(cluster) }
