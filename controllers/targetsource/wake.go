package targetsource

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Wake asks for a sync of the TargetSource now, whatever its interval: a provider that learnt of a new
// snapshot (a push inventory that received one) calls it. A replica that does not sync the TargetSource
// ignores it.
func (r *Reconciler) Wake(key types.NamespacedName) { r.wakes.request(key) }

// wakes is the source of the syncs asked for by Wake: each is an add to the controller's queue, and a mark
// that the next reconcile of the TargetSource takes (taken) to sync before its interval. Forgetting rule: a
// mark goes with the reconcile that takes it.
type wakes struct {
	mu      sync.Mutex
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending map[types.NamespacedName]bool
}

// Start implements source.Source: the wakes asked for before the controller started go into its queue.
func (w *wakes) Start(_ context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = queue
	for key := range w.pending {
		queue.Add(reconcile.Request{NamespacedName: key})
	}
	return nil
}

func (w *wakes) String() string { return "wakes of TargetSources" }

func (w *wakes) request(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[types.NamespacedName]bool{}
	}
	w.pending[key] = true
	if w.queue != nil {
		w.queue.Add(reconcile.Request{NamespacedName: key})
	}
}

// taken is true when a sync of the TargetSource was asked for since its last reconcile, and forgets it.
func (w *wakes) taken(key types.NamespacedName) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	woken := w.pending[key]
	delete(w.pending, key)
	return woken
}

// keep marks a sync as asked for again without adding to the queue: the reconcile that took the mark could not
// sync yet, and its requeue takes the mark.
func (w *wakes) keep(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[types.NamespacedName]bool{}
	}
	w.pending[key] = true
}

// lookAtEvery queues every TargetSource for a look, without asking for a sync: the members changed, and a
// TargetSource this replica got is synced when due (or its record of a sync released) now, not at the next
// shardRecheck.
func (r *Reconciler) lookAtEvery(ctx context.Context) {
	var list operatorv1alpha1.TargetSourceList
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list TargetSources after the members changed")
		return
	}
	keys := make([]types.NamespacedName, 0, len(list.Items))
	for i := range list.Items {
		keys = append(keys, client.ObjectKeyFromObject(&list.Items[i]))
	}
	r.wakes.look(keys)
}

// look adds the TargetSources to the controller's queue, once it started, without marking them woken.
func (w *wakes) look(keys []types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil {
		return // the controller's start lists every TargetSource
	}
	for _, key := range keys {
		w.queue.Add(reconcile.Request{NamespacedName: key})
	}
}
