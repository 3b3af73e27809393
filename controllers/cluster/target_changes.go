package cluster

import (
	"context"
	"slices"
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gnmic-operator/gnmic-operator/internal/changelog"
)

// targetChanges counts, per namespace, the changes of its Targets that the reconciler's caches applied: every
// create, update (spec, labels or status) and delete, and logs the names of the latest ones. A reconcile that
// finds the count of its namespace where its last list left it reuses that list (observe): the cache holds the
// same Targets; one that finds only a few changes since takes just the Targets they name from the cache again.
//
// The count moves in the Targets' watch handler, before that handler wakes any Cluster, and the handler runs
// once the cache holds the change: a reconcile woken by a change always finds the count moved. A reconcile
// that reads the count before a change lands lists again at its next reconcile, which the change wakes (spec
// and labels) or which comes anyway (status-only changes wake nothing, and read nothing new until then).
type targetChanges struct {
	namespaces sync.Map // namespace -> *namespaceChanges
}

// namespaceChanges are one namespace's Target changes: their count, and the names of the latest.
type namespaceChanges struct {
	mu  sync.Mutex
	log changelog.Log
}

// targetChangeLog is how many of a namespace's latest Target changes are named at least: a reconcile that
// finds more since its last list lists the namespace again.
const targetChangeLog = 512

// in is the namespace's changes, made on first use.
func (c *targetChanges) in(namespace string) *namespaceChanges {
	v, ok := c.namespaces.Load(namespace)
	if !ok {
		v, _ = c.namespaces.LoadOrStore(namespace, &namespaceChanges{log: changelog.Log{Window: targetChangeLog}})
	}
	return v.(*namespaceChanges)
}

// of is the count of the namespace's Target changes.
func (c *targetChanges) of(namespace string) uint64 {
	n := c.in(namespace)
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.log.Count()
}

// since gives the names of the namespace's Target changes after the one numbered from, and the count they
// bring it to, when the log still names them all.
func (c *targetChanges) since(namespace string, from uint64) (names []string, count uint64, ok bool) {
	n := c.in(namespace)
	n.mu.Lock()
	defer n.mu.Unlock()
	names, ok = n.log.Since(from)
	if !ok {
		return nil, 0, false
	}
	return slices.Clone(names), n.log.Count(), true
}

// note counts one change of the named Target of the namespace.
func (c *targetChanges) note(namespace, name string) {
	n := c.in(namespace)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log.Note(name)
}

// counting is inner behind predicates, counting every event first, whether the predicates let it through or not.
func (c *targetChanges) counting(inner handler.EventHandler, predicates []predicate.Predicate) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	passes := func(obj client.Object, lets func(predicate.Predicate) bool) bool {
		c.note(obj.GetNamespace(), obj.GetName())
		for _, p := range predicates {
			if !lets(p) {
				return false
			}
		}
		return true
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			if passes(e.Object, func(p predicate.Predicate) bool { return p.Create(e) }) {
				inner.Create(ctx, e, q)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			if passes(e.ObjectNew, func(p predicate.Predicate) bool { return p.Update(e) }) {
				inner.Update(ctx, e, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if passes(e.Object, func(p predicate.Predicate) bool { return p.Delete(e) }) {
				inner.Delete(ctx, e, q)
			}
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) {
			if passes(e.Object, func(p predicate.Predicate) bool { return p.Generic(e) }) {
				inner.Generic(ctx, e, q)
			}
		},
	}
}
