package cluster

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// targetChanges counts, per namespace, the changes of its Targets that the reconciler's caches applied: every
// create, update (spec, labels or status) and delete. A reconcile that finds the count of its namespace where
// its last list left it reuses that list (observe): the cache holds the same Targets.
//
// The count moves in the Targets' watch handler, before that handler wakes any Cluster, and the handler runs
// once the cache holds the change: a reconcile woken by a change always finds the count moved. A reconcile
// that reads the count before a change lands lists again at its next reconcile, which the change wakes (spec
// and labels) or which comes anyway (status-only changes wake nothing, and read nothing new until then).
type targetChanges struct {
	counts sync.Map // namespace -> *atomic.Uint64
}

// of is the count of the namespace's Target changes.
func (c *targetChanges) of(namespace string) uint64 {
	v, ok := c.counts.Load(namespace)
	if !ok {
		return 0
	}
	return v.(*atomic.Uint64).Load()
}

// note counts one change of a Target of the namespace.
func (c *targetChanges) note(namespace string) {
	v, ok := c.counts.Load(namespace)
	if !ok {
		v, _ = c.counts.LoadOrStore(namespace, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(1)
}

// counting is inner behind predicates, counting every event first, whether the predicates let it through or not.
func (c *targetChanges) counting(inner handler.EventHandler, predicates []predicate.Predicate) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	passes := func(namespace string, lets func(predicate.Predicate) bool) bool {
		c.note(namespace)
		for _, p := range predicates {
			if !lets(p) {
				return false
			}
		}
		return true
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			if passes(e.Object.GetNamespace(), func(p predicate.Predicate) bool { return p.Create(e) }) {
				inner.Create(ctx, e, q)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			if passes(e.ObjectNew.GetNamespace(), func(p predicate.Predicate) bool { return p.Update(e) }) {
				inner.Update(ctx, e, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if passes(e.Object.GetNamespace(), func(p predicate.Predicate) bool { return p.Delete(e) }) {
				inner.Delete(ctx, e, q)
			}
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) {
			if passes(e.Object.GetNamespace(), func(p predicate.Predicate) bool { return p.Generic(e) }) {
				inner.Generic(ctx, e, q)
			}
		},
	}
}
