package controllers

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

// burstWindow is how often a burst of Target changes wakes a Cluster: the first change of a quiet Cluster
// wakes it at once, the next ones within the window wake it once, at the window's end. Thousands of Targets
// created at once then cost a reconcile a second, not one per reconcile's worth of arrivals, each of them
// rendering the whole fleet and writing the Cluster's and its Pipelines' counts.
const burstWindow = time.Second

// burstWakes maps watch events to Cluster requests and spaces each Cluster's wakes by burstWindow.
type burstWakes struct {
	mapper handler.MapFunc
	// last is when each Cluster was last woken (types.NamespacedName -> time.Time).
	last sync.Map
}

// handler gives the event handler that enqueues through the burst window.
func (b *burstWakes) handler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			b.wake(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			b.wake(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			b.wake(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			b.wake(ctx, q, e.Object)
		},
	}
}

func (b *burstWakes) wake(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
	now := time.Now()
	seen := map[types.NamespacedName]bool{}
	for _, obj := range objs {
		for _, req := range b.mapper(ctx, obj) {
			if seen[req.NamespacedName] {
				continue
			}
			seen[req.NamespacedName] = true
			q.AddAfter(req, b.delay(req.NamespacedName, now))
		}
	}
}

// delay is how long the Cluster's wake waits: nothing when its last wake is a window ago; until the wake
// already scheduled, when there is one; else until a window after the last wake. The queue keeps the earliest
// of a request's pending wakes, so a burst leaves one per window.
func (b *burstWakes) delay(cluster types.NamespacedName, now time.Time) time.Duration {
	if v, ok := b.last.Load(cluster); ok {
		last := v.(time.Time)
		if !last.Before(now) {
			return last.Sub(now)
		}
		if now.Sub(last) < burstWindow {
			at := last.Add(burstWindow)
			b.last.Store(cluster, at)
			return at.Sub(now)
		}
	}
	b.last.Store(cluster, now)
	return 0
}

// forget drops a deleted Cluster's record.
func (b *burstWakes) forget(cluster types.NamespacedName) { b.last.Delete(cluster) }
