package controllers_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// The operator reads some kinds from its caches without deep copies (client.UnsafeDisableDeepCopy): what it
// lists is then the cache's own objects, and a write into one of their maps, slices or pointers changes the
// cache, for every later reader, without any API write (docs/development.md, "Reading from the cache").
//
// Every cache the suite's managers build (and the caches of a sharded replica's share) is wrapped in a tripwire: it keeps a deep copy of every object of
// those kinds as the cache delivered it, and finds the cached objects that differ from their copy at the same
// resourceVersion. Each operator's Stop and every spec's end check it, so the whole suite runs under it.

// tripwireKinds are the kinds the operator reads without copies (and Clusters, which sharding lists so).
var tripwireKinds = []client.Object{
	&operatorv1alpha1.Target{}, &operatorv1alpha1.Pipeline{}, &operatorv1alpha1.Subscription{},
	&operatorv1alpha1.Output{}, &operatorv1alpha1.Input{}, &operatorv1alpha1.Processor{},
	&operatorv1alpha1.TargetProfile{}, &operatorv1alpha1.TunnelTargetPolicy{}, &operatorv1alpha1.Cluster{},
	&operatorv1alpha1.Balancer{}, &corev1.Pod{}, &corev1.Node{}, &autoscalingv2.HorizontalPodAutoscaler{},
}

// tripwires are the tripwires of the caches not yet checked since their manager stopped.
var tripwires = &tripwireRegistry{}

type tripwireRegistry struct {
	mu    sync.Mutex
	wires []*cacheTripwire
}

// newCache is the managers' cache.NewCacheFunc: a cache with a tripwire.
func (reg *tripwireRegistry) newCache(config *rest.Config, opts cache.Options) (cache.Cache, error) {
	c, err := cache.New(config, opts)
	if err != nil {
		return nil, err
	}
	wire := newCacheTripwire(opts.Scheme)
	// A cache that refuses reads of kinds it was not asked to inform on (a sharded replica's share caches)
	// must keep refusing them: only its informers feed the tripwire.
	wire.readsStartInformers = !opts.ReaderFailOnMissingInformer
	reg.mu.Lock()
	reg.wires = append(reg.wires, wire)
	reg.mu.Unlock()
	return &trippedCache{Cache: c, wire: wire}, nil
}

// mutated checks every tripwire and forgets those whose cache has stopped.
func (reg *tripwireRegistry) mutated() []string {
	reg.mu.Lock()
	wires := slices.Clone(reg.wires)
	reg.mu.Unlock()
	var out []string
	for _, w := range wires {
		out = append(out, w.mutated()...)
	}
	reg.forgetStopped(wires)
	return out
}

// forgetStopped forgets the checked tripwires whose cache has stopped: nothing can change it any more.
func (reg *tripwireRegistry) forgetStopped(checked []*cacheTripwire) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.wires = slices.DeleteFunc(reg.wires, func(w *cacheTripwire) bool { return slices.Contains(checked, w) && w.stopped() })
}

// cacheTripwire holds, per kind, how to read the cache's objects and a deep copy of each object as the cache
// delivered it.
type cacheTripwire struct {
	scheme *runtime.Scheme
	kinds  map[schema.GroupVersionKind]bool
	// readsStartInformers is true when a read of a kind the cache has no informer of starts one.
	readsStartInformers bool

	mu        sync.Mutex
	cached    map[schema.GroupVersionKind]func() []any
	delivered map[schema.GroupVersionKind]map[string]client.Object
	done      <-chan struct{}
}

func newCacheTripwire(scheme *runtime.Scheme) *cacheTripwire {
	w := &cacheTripwire{scheme: scheme, kinds: map[schema.GroupVersionKind]bool{},
		cached: map[schema.GroupVersionKind]func() []any{}, delivered: map[schema.GroupVersionKind]map[string]client.Object{}}
	for _, obj := range tripwireKinds {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			panic(err) // every kind is in the suite's scheme
		}
		w.kinds[gvk] = true
	}
	return w
}

// stopped is true once the cache's Start returned (a cache not started yet may still start).
func (w *cacheTripwire) stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == nil {
		return false
	}
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// itemKind is the kind of obj, or of the items of the list obj, when the tripwire watches it; metadata-only
// reads are not watched.
func (w *cacheTripwire) itemKind(obj runtime.Object) (schema.GroupVersionKind, bool) {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return schema.GroupVersionKind{}, false
	}
	gvk, err := apiutil.GVKForObject(obj, w.scheme)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	if _, isList := obj.(client.ObjectList); isList {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	return gvk, w.kinds[gvk]
}

// watch registers the tripwire on the informer of the kind, once; c is the cache it belongs to.
func (w *cacheTripwire) watch(gvk schema.GroupVersionKind, informer cache.Informer, c client.Reader) error {
	w.mu.Lock()
	if w.cached[gvk] != nil {
		w.mu.Unlock()
		return nil
	}
	if store, ok := informer.(interface{ GetStore() toolscache.Store }); ok {
		w.cached[gvk] = store.GetStore().List
	} else {
		// A cache of some namespaces has an informer per namespace: its objects are read through it.
		w.cached[gvk] = func() []any { return w.listShared(c, gvk) }
	}
	w.delivered[gvk] = map[string]client.Object{}
	w.mu.Unlock()
	keep := func(obj any) {
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		copied := o.DeepCopyObject().(client.Object)
		w.mu.Lock()
		w.delivered[gvk][storeKey(o)] = copied
		w.mu.Unlock()
	}
	_, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    keep,
		UpdateFunc: func(_, obj any) { keep(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if o, ok := obj.(client.Object); ok {
				w.mu.Lock()
				delete(w.delivered[gvk], storeKey(o))
				w.mu.Unlock()
			}
		},
	})
	return err
}

func storeKey(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// listShared lists the cache's objects of the kind without copies: each item a copy of the cached object's
// struct, sharing its maps, slices and pointers. None when the cache cannot be read (stopped before it synced).
func (w *cacheTripwire) listShared(c client.Reader, gvk schema.GroupVersionKind) []any {
	obj, err := w.scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil
	}
	list := obj.(client.ObjectList)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	out := make([]any, len(items))
	for i := range items {
		out[i] = items[i]
	}
	return out
}

// mutated names each cached object that differs from the copy the cache delivered at the same
// resourceVersion, with a short diff. An object whose newer version is not delivered yet is not compared.
func (w *cacheTripwire) mutated() []string {
	w.mu.Lock()
	readers := maps.Clone(w.cached)
	w.mu.Unlock()
	cached := map[schema.GroupVersionKind][]any{}
	for gvk, read := range readers {
		cached[gvk] = read()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for gvk, items := range cached {
		for _, item := range items {
			cached, ok := item.(client.Object)
			if !ok {
				continue
			}
			copied := w.delivered[gvk][storeKey(cached)]
			if copied == nil || copied.GetResourceVersion() != cached.GetResourceVersion() || reflect.DeepEqual(copied, cached) {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s changed in the cache at resourceVersion %s:\n%s", gvk.Kind, storeKey(cached),
				cached.GetResourceVersion(), shortDiff(copied, cached)))
		}
	}
	slices.Sort(out)
	return out
}

// shortDiff is the first lines of the diff from the delivered copy to the cached object.
func shortDiff(delivered, cached client.Object) string {
	lines := strings.Split(diff.Diff(delivered, cached), "\n")
	if len(lines) > 30 {
		lines = append(lines[:30], "…")
	}
	if len(lines) <= 3 {
		return "(no difference in JSON: a nil and an empty map or slice, or a field JSON leaves out)"
	}
	return strings.Join(lines, "\n")
}

// trippedCache is a cache whose informers of the tripwire's kinds feed the tripwire: those a controller
// watches and those a read starts.
type trippedCache struct {
	cache.Cache
	wire *cacheTripwire
}

func (c *trippedCache) Start(ctx context.Context) error {
	done := make(chan struct{})
	c.wire.mu.Lock()
	c.wire.done = done
	c.wire.mu.Unlock()
	defer close(done)
	return c.Cache.Start(ctx)
}

func (c *trippedCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	informer, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	if gvk, ok := c.wire.itemKind(obj); ok {
		if err := c.wire.watch(gvk, informer, c.Cache); err != nil {
			return nil, err
		}
	}
	return informer, nil
}

func (c *trippedCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	informer, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	if c.wire.kinds[gvk] {
		if err := c.wire.watch(gvk, informer, c.Cache); err != nil {
			return nil, err
		}
	}
	return informer, nil
}

func (c *trippedCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.watchRead(ctx, obj); err != nil {
		return err
	}
	return c.Cache.Get(ctx, key, obj, opts...)
}

func (c *trippedCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.watchRead(ctx, list); err != nil {
		return err
	}
	return c.Cache.List(ctx, list, opts...)
}

// watchRead registers the tripwire on the informer a read of obj's kind uses (and starts, as the read would).
func (c *trippedCache) watchRead(ctx context.Context, obj runtime.Object) error {
	gvk, ok := c.wire.itemKind(obj)
	if !ok || !c.wire.readsStartInformers {
		return nil
	}
	c.wire.mu.Lock()
	watched := c.wire.cached[gvk] != nil
	c.wire.mu.Unlock()
	if watched {
		return nil
	}
	informer, err := c.Cache.GetInformerForKind(ctx, gvk, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	return c.wire.watch(gvk, informer, c.Cache)
}

// holds is true once the tripwire holds the copy of the object the cache delivered at its resourceVersion.
func (w *cacheTripwire) holds(gvk schema.GroupVersionKind, obj client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	copied := w.delivered[gvk][storeKey(obj)]
	return copied != nil && copied.GetResourceVersion() == obj.GetResourceVersion()
}

var _ = Describe("The cache tripwire", func() {
	It("reports the one object changed in the cache through a list without copies, and nothing after a list with copies", func() {
		mgr := newManager(cfg)
		op := runManager(mgr)
		DeferCleanup(op.Stop)
		Expect(op.tripwire).NotTo(BeNil())
		namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tripwire-"}}
		Expect(k8sClient.Create(suiteCtx, namespace)).To(Succeed())
		ns := namespace.Name
		for _, name := range []string{"a", "b"} {
			Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
				Labels: map[string]string{"tripwire": "untouched"}}, Spec: operatorv1alpha1.TargetSpec{Address: "10.0.0.1:57400", Profile: "routers"}})).To(Succeed())
		}
		targetKind := operatorv1alpha1.GroupVersion.WithKind("Target")
		reader := mgr.GetClient()
		var targets operatorv1alpha1.TargetList
		Eventually(func(g Gomega) {
			g.Expect(reader.List(suiteCtx, &targets, client.InNamespace(ns))).To(Succeed())
			g.Expect(targets.Items).To(HaveLen(2))
			for i := range targets.Items {
				g.Expect(op.tripwire.holds(targetKind, &targets.Items[i])).To(BeTrue())
			}
		}, 30*time.Second).Should(Succeed())
		Expect(op.tripwire.mutated()).To(BeEmpty())

		By("changing a copy: the cache is untouched")
		targets.Items[0].Labels["tripwire"] = "changed"
		Expect(op.tripwire.mutated()).To(BeEmpty())

		By("changing the cache's own object, listed without copies")
		var shared operatorv1alpha1.TargetList
		Expect(reader.List(suiteCtx, &shared, client.InNamespace(ns), client.UnsafeDisableDeepCopy)).To(Succeed())
		victim := &shared.Items[1]
		victim.Labels["tripwire"] = "changed" // the labels map is the cache's
		Expect(op.tripwire.mutated()).To(ConsistOf(And(
			HavePrefix("Target %s/%s changed in the cache at resourceVersion %s", ns, victim.Name, victim.ResourceVersion),
			MatchRegexp(`(?m)^-\s+"tripwire": "untouched"`), MatchRegexp(`(?m)^\+\s+"tripwire": "changed"`))))

		By("undoing the change")
		victim.Labels["tripwire"] = "untouched"
		Expect(op.tripwire.mutated()).To(BeEmpty())
	})
})
