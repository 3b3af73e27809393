//go:build e2e

package sharding

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// servedRecorder follows, through watches of the Clusters and of the member Leases, whether each Cluster has a
// live, undrained owner, and records the longest stretch one spent without. A poll of 300 Clusters and the
// Leases on a saturated machine comes every few seconds, and would add its own gaps to the stretches it
// measures; a watch event is timed when it arrives.
type servedRecorder struct {
	mu      sync.Mutex
	shards  map[string]shardOf   // by Cluster namespace
	live    map[string]bool      // holders of member Leases not marked dead
	since   map[string]time.Time // Clusters without a live, undrained owner, since when
	longest time.Duration
	worst   string
	stop    context.CancelFunc
	// counts is each Cluster's status.targetsCount; changes lists every change of it the watch delivered.
	counts  map[string]int32
	changes []string
}

// startServedRecorder starts the watches and returns once they listed every Cluster and Lease.
func startServedRecorder() *servedRecorder {
	r := &servedRecorder{shards: map[string]shardOf{}, live: map[string]bool{}, since: map[string]time.Time{}, counts: map[string]int32{}}
	c, err := cache.New(cp.Config, cache.Options{Scheme: k8sClient.Scheme(), ByObject: map[client.Object]cache.ByObject{
		&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{harness.OperatorNamespace: {}},
			Label: labels.SelectorFromSet(labels.Set{"operator.gnmic.dev/shard-member": "true"})},
	}})
	Expect(err).NotTo(HaveOccurred())
	watchCtx, stop := context.WithCancel(ctx)
	r.stop = stop
	for _, obj := range []client.Object{&operatorv1alpha1.Cluster{}, &coordinationv1.Lease{}} {
		informer, err := c.GetInformer(watchCtx, obj)
		Expect(err).NotTo(HaveOccurred())
		_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { r.observe(o, false) },
			UpdateFunc: func(_, o any) { r.observe(o, false) },
			DeleteFunc: func(o any) { r.observe(o, true) },
		})
		Expect(err).NotTo(HaveOccurred())
	}
	go func() { _ = c.Start(watchCtx) }()
	Expect(c.WaitForCacheSync(watchCtx)).To(BeTrue())
	return r
}

func (r *servedRecorder) observe(obj any, deleted bool) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o := obj.(type) {
	case *operatorv1alpha1.Cluster:
		switch {
		case deleted:
			delete(r.shards, o.Namespace)
		case o.Status.Shard == nil:
			r.shards[o.Namespace] = shardOf{}
		default:
			r.shards[o.Namespace] = shardOf{owner: o.Status.Shard.Owner, drained: o.Status.Shard.Drained}
		}
		if was, seen := r.counts[o.Namespace]; !deleted && seen && was != o.Status.TargetsCount {
			owner := ""
			if o.Status.Shard != nil {
				owner = o.Status.Shard.Owner
			}
			r.changes = append(r.changes, fmt.Sprintf("%s: targetsCount %d → %d, written by owner %q", o.Namespace, was, o.Status.TargetsCount, owner))
		}
		r.counts[o.Namespace] = o.Status.TargetsCount
	case *coordinationv1.Lease:
		if o.Spec.HolderIdentity == nil {
			return
		}
		r.live[*o.Spec.HolderIdentity] = !deleted && o.Annotations["operator.gnmic.dev/dead"] != "true"
	}
	for namespace, s := range r.shards {
		served := s.owner != "" && !s.drained && r.live[s.owner]
		began, was := r.since[namespace]
		switch {
		case !served && !was:
			r.since[namespace] = now
		case served && was:
			if d := now.Sub(began); d > r.longest {
				r.longest, r.worst = d, namespace
			}
			delete(r.since, namespace)
		}
	}
	for namespace := range r.since {
		if _, exists := r.shards[namespace]; !exists {
			delete(r.since, namespace)
		}
	}
}

// unserved are the Clusters (by namespace) without a live, undrained owner now.
func (r *servedRecorder) unserved() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.since))
	for namespace := range r.since {
		out = append(out, namespace)
	}
	return out
}

// countChanges lists the changes of a Cluster's status.targetsCount seen since the recorder started.
func (r *servedRecorder) countChanges() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.changes...)
}

// longestUnserved is the longest stretch a Cluster spent without a live, undrained owner, and which Cluster.
func (r *servedRecorder) longestUnserved() (time.Duration, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.longest, r.worst
}
