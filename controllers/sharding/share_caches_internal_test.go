package sharding

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := operatorv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// testKinds are the kinds the Cluster reconciler has its share's caches hold (controllers.ShareKinds).
func testKinds() Kinds {
	return Kinds{
		Owned: []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.ConfigMap{}, &policyv1.PodDisruptionBudget{},
			&networkingv1.NetworkPolicy{}, &corev1.Pod{}},
		PerNamespace: []client.Object{&operatorv1alpha1.Target{}},
	}
}

func testShareCaches(t *testing.T) *shareCaches {
	t.Helper()
	s, err := newShareCaches(nil, nil, testScheme(t), nil, testKinds(), func(types.NamespacedName) {})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestShareCachesRouteTheClusterObjectsAndTargetsOnly(t *testing.T) {
	s := testShareCaches(t)
	secretMeta := &metav1.PartialObjectMetadata{}
	secretMeta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	for _, tc := range []struct {
		obj  runtime.Object
		want bool
	}{
		{&corev1.Pod{}, true},
		{&corev1.PodList{}, true},
		{&appsv1.StatefulSet{}, true},
		{&appsv1.StatefulSetList{}, true},
		{&corev1.ConfigMapList{}, true},
		{&operatorv1alpha1.Target{}, true},
		{&operatorv1alpha1.TargetList{}, true},
		{&operatorv1alpha1.Cluster{}, false}, // every replica holds every Cluster: the metrics API reads them
		{&operatorv1alpha1.PipelineList{}, false},
		{&corev1.Secret{}, false},
		{secretMeta, false},
		{&corev1.Node{}, false},
	} {
		if got := s.routes(tc.obj); got != tc.want {
			t.Errorf("routes(%T) = %v, want %v", tc.obj, got, tc.want)
		}
	}
}

func TestSetShareGroupsTheClustersByNamespaceSortedOnce(t *testing.T) {
	s := testShareCaches(t)
	s.setShare([]types.NamespacedName{{Namespace: "a", Name: "y"}, {Namespace: "b", Name: "z"},
		{Namespace: "a", Name: "x"}, {Namespace: "a", Name: "y"}})
	want := map[string][]string{"a": {"x", "y"}, "b": {"z"}}
	if len(s.want) != len(want) {
		t.Fatalf("share %v, want %v", s.want, want)
	}
	for ns, names := range want {
		if !slices.Equal(s.want[ns], names) {
			t.Errorf("share of namespace %s: %v, want %v", ns, s.want[ns], names)
		}
	}
	select {
	case <-s.changed:
	default:
		t.Error("a new share does not ask the caches to follow it")
	}
	// Every assignment round sets the share: the same share again must not restart the quiet period that a
	// consolidation of the caches waits for.
	s.setShare([]types.NamespacedName{{Namespace: "a", Name: "x"}, {Namespace: "b", Name: "z"}, {Namespace: "a", Name: "y"}})
	select {
	case <-s.changed:
		t.Error("the same share again asks the caches to follow it")
	default:
	}
}

func TestShareCachesCoverAClusterOnlyOnceCachesOfItsObjectsAndTargetsServe(t *testing.T) {
	s := testShareCaches(t)
	s.segments = []*shareCache{{clusters: []string{"x"}, keys: []string{"a/x", "b/x"}}, {clusters: []string{"y"}, keys: []string{"a/y"}}}
	s.pending = []*shareCache{{clusters: []string{"w"}, keys: []string{"a/w"}}}
	s.namespaces["a"] = &namespaceTargets{synced: true}
	s.namespaces["b"] = &namespaceTargets{}
	for _, tc := range []struct {
		cluster types.NamespacedName
		want    bool
	}{
		{types.NamespacedName{Namespace: "a", Name: "x"}, true},
		{types.NamespacedName{Namespace: "a", Name: "y"}, true},  // in another segment
		{types.NamespacedName{Namespace: "a", Name: "w"}, false}, // the cache of its objects is still being built
		{types.NamespacedName{Namespace: "c", Name: "y"}, false}, // its name is cached, for another namespace
		{types.NamespacedName{Namespace: "b", Name: "x"}, false}, // the namespace's Targets are not cached yet
		{types.NamespacedName{Namespace: "c", Name: "x"}, false}, // a namespace outside the share
	} {
		if got := s.covers(tc.cluster); got != tc.want {
			t.Errorf("covers(%s) = %v, want %v", tc.cluster, got, tc.want)
		}
	}
}

// readerCache is a cache whose reads come from a store.
type readerCache struct {
	cache.Cache
	reader client.Reader
}

func (c readerCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reader.Get(ctx, key, obj, opts...)
}

func (c readerCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.reader.List(ctx, list, opts...)
}

// store is a reader of the Clusters, Pods and Targets it was given, standing for one of the places the share's
// client may read from (a cache, the API server): the test checks which place answers, not how Kubernetes
// reads.
type store struct {
	clusters []operatorv1alpha1.Cluster
	pods     []corev1.Pod
	targets  []operatorv1alpha1.Target
}

func (s store) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *operatorv1alpha1.Cluster:
		return found(s.clusters, key, o, "clusters")
	case *corev1.Pod:
		return found(s.pods, key, o, "pods")
	case *operatorv1alpha1.Target:
		return found(s.targets, key, o, "targets")
	}
	return fmt.Errorf("store: no %T", obj)
}

func (s store) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var o client.ListOptions
	o.ApplyOptions(opts)
	switch l := list.(type) {
	case *corev1.PodList:
		l.Items = inNamespace(s.pods, o.Namespace)
	case *operatorv1alpha1.TargetList:
		l.Items = inNamespace(s.targets, o.Namespace)
	case *operatorv1alpha1.ClusterList:
		l.Items = inNamespace(s.clusters, o.Namespace)
	default:
		return fmt.Errorf("store: no %T", list)
	}
	return nil
}

// storeClient is the manager's client, reading from a store.
type storeClient struct {
	client.Client
	store store
}

func (c storeClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.store.Get(ctx, key, obj, opts...)
}

func (c storeClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.store.List(ctx, list, opts...)
}

// found copies the item of items named key into out, or returns NotFound.
func found[T any, P interface {
	*T
	client.Object
}](items []T, key client.ObjectKey, out P, resource string) error {
	for i := range items {
		if P(&items[i]).GetNamespace() == key.Namespace && P(&items[i]).GetName() == key.Name {
			*out = items[i]
			return nil
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, key.Name)
}

// inNamespace are the items in namespace ("": every one).
func inNamespace[T any, P interface {
	*T
	client.Object
}](items []T, namespace string) []T {
	var out []T
	for i := range items {
		if namespace == "" || P(&items[i]).GetNamespace() == namespace {
			out = append(out, items[i])
		}
	}
	return out
}

func TestShareClientReadsEachKindFromWhereItIsHeld(t *testing.T) {
	pod := func(ns, name string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{operatorv1alpha1.ClusterLabel: "c"}}}
	}
	target := func(ns, name string) operatorv1alpha1.Target {
		return operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	manager := storeClient{store: store{clusters: []operatorv1alpha1.Cluster{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c"}}},
		pods: []corev1.Pod{pod("a", "stale")}}}
	objects := store{pods: []corev1.Pod{pod("a", "p"), pod("b", "q")}}
	targetsA := store{targets: []operatorv1alpha1.Target{target("a", "t")}}
	live := store{pods: []corev1.Pod{pod("c", "r")}, targets: []operatorv1alpha1.Target{target("b", "u")}}
	s := testShareCaches(t)
	s.segments = []*shareCache{{clusters: []string{"c"}, keys: []string{"a/c", "b/c"}, cache: readerCache{reader: objects}}}
	s.namespaces["a"] = &namespaceTargets{cache: &shareCache{cache: readerCache{reader: targetsA}}, synced: true}
	s.namespaces["b"] = &namespaceTargets{cache: &shareCache{}} // not synced yet
	c := &shareClient{Client: manager, share: s, live: live}
	ctx := context.Background()

	for _, tc := range []struct {
		key   types.NamespacedName
		obj   client.Object
		found bool
	}{
		{types.NamespacedName{Namespace: "a", Name: "p"}, &corev1.Pod{}, true},      // the share's Cluster objects
		{types.NamespacedName{Namespace: "a", Name: "stale"}, &corev1.Pod{}, false}, // never the manager's cache
		{types.NamespacedName{Namespace: "c", Name: "r"}, &corev1.Pod{}, false},     // not a Cluster of the share
		{types.NamespacedName{Namespace: "a", Name: "c"}, &operatorv1alpha1.Cluster{}, true},
		{types.NamespacedName{Namespace: "a", Name: "t"}, &operatorv1alpha1.Target{}, true}, // the namespace's Targets
		{types.NamespacedName{Namespace: "b", Name: "u"}, &operatorv1alpha1.Target{}, true}, // not synced: the API server
	} {
		err := c.Get(ctx, tc.key, tc.obj)
		if (err == nil) != tc.found {
			t.Errorf("Get %T %s: %v, want found=%v", tc.obj, tc.key, err, tc.found)
		}
	}

	targetNames := func(opts ...client.ListOption) []string {
		var targets operatorv1alpha1.TargetList
		if err := c.List(ctx, &targets, opts...); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, t := range targets.Items {
			out = append(out, t.Namespace+"/"+t.Name)
		}
		return out
	}
	if got := targetNames(client.InNamespace("b")); !slices.Equal(got, []string{"b/u"}) {
		t.Errorf("targets of a namespace whose cache is not synced: %v, want the API server's", got)
	}
	if got := targetNames(); !slices.Equal(got, []string{"a/t"}) {
		t.Errorf("targets of every namespace: %v, want those of the share's synced caches", got)
	}

	names := func(opts ...client.ListOption) []string {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, opts...); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range pods.Items {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		opts []client.ListOption
		want []string
	}{
		{[]client.ListOption{client.InNamespace("a")}, []string{"a/p"}},
		{[]client.ListOption{client.InNamespace("c")}, nil},
		{nil, []string{"a/p", "b/q"}}, // the share's Clusters in every namespace
	} {
		if got := names(tc.opts...); !slices.Equal(got, tc.want) {
			t.Errorf("List pods %v: %v, want %v", tc.opts, got, tc.want)
		}
	}
}

func TestPodIdentityOnlyKeepsWhatNamesAPod(t *testing.T) {
	now := metav1.Now()
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "c-0", Namespace: "n", UID: "u", ResourceVersion: "7", DeletionTimestamp: &now,
			Labels: map[string]string{operatorv1alpha1.ClusterLabel: "c"}, Annotations: map[string]string{"big": "x"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "gnmic"}}},
		Status: corev1.PodStatus{PodIP: "10.0.0.1"},
	}
	got, err := podIdentityOnly(full)
	if err != nil {
		t.Fatal(err)
	}
	p := got.(*corev1.Pod)
	if p.Name != "c-0" || p.Namespace != "n" || p.UID != "u" || p.ResourceVersion != "7" || p.DeletionTimestamp == nil ||
		p.Labels[operatorv1alpha1.ClusterLabel] != "c" {
		t.Errorf("lost what names the pod: %+v", p.ObjectMeta)
	}
	if len(p.Spec.Containers) != 0 || p.Status.PodIP != "" || p.Annotations != nil || p.ManagedFields != nil {
		t.Errorf("kept more than what names the pod: %+v", p)
	}
	tombstone := "not a pod"
	if kept, err := podIdentityOnly(tombstone); err != nil || kept != tombstone {
		t.Errorf("podIdentityOnly(%q) = %v, %v", tombstone, kept, err)
	}
}

func TestShareCacheOptionsSelectTheShareWithinTheWatchedNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name       string
		watched    []string
		namespace  string
		clusters   []string
		namespaces []string // nil: every namespace
		selector   string
	}{
		{name: "the share's Cluster objects, every namespace", clusters: []string{"a", "b"},
			selector: operatorv1alpha1.ClusterLabel + " in (a,b)"},
		{name: "the share's Cluster objects, the watched namespaces only", watched: []string{"n1", "n2"},
			clusters: []string{"a"}, namespaces: []string{"n1", "n2"}, selector: operatorv1alpha1.ClusterLabel + " in (a)"},
		{name: "a namespace's Targets, whole", watched: []string{"n1", "n2"}, namespace: "n2", namespaces: []string{"n2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testShareCaches(t)
			s.watchNamespaces = tc.watched
			opts, err := s.shareCacheOptions(tc.namespace, tc.clusters, nil)
			if err != nil {
				t.Fatal(err)
			}
			var namespaces []string
			for ns := range opts.DefaultNamespaces {
				namespaces = append(namespaces, ns)
			}
			slices.Sort(namespaces)
			if !slices.Equal(namespaces, tc.namespaces) {
				t.Errorf("namespaces %v, want %v", namespaces, tc.namespaces)
			}
			selector := ""
			if opts.DefaultLabelSelector != nil {
				selector = opts.DefaultLabelSelector.String()
			}
			if selector != tc.selector {
				t.Errorf("selector %q, want %q", selector, tc.selector)
			}
			if opts.DefaultTransform == nil || !opts.ReaderFailOnMissingInformer {
				t.Error("the share's caches keep managedFields, or start informers on reads")
			}
		})
	}
}

// The caches select by Cluster name, so a same-named Cluster of another namespace is selected too: its objects
// are kept only by what names them, the share's whole (without managedFields).
func TestStubOutsideShareKeepsTheShareWholeAndOnlyNamesTheRest(t *testing.T) {
	transform := stubOutsideShare([]string{"team-a/telemetry", "team-c/edge"})
	statefulSet := func(namespace, cluster string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cluster, UID: types.UID("u-" + namespace), ResourceVersion: "9",
				Labels:        map[string]string{operatorv1alpha1.ClusterLabel: cluster, "app.kubernetes.io/name": "gnmic"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(3)), ServiceName: cluster},
		}
	}
	for _, tc := range []struct {
		namespace, cluster string
		whole              bool
	}{
		{"team-a", "telemetry", true},
		{"team-b", "telemetry", false}, // same name, another namespace
		{"team-c", "edge", true},
		{"team-a", "edge", false},
	} {
		got, err := transform(statefulSet(tc.namespace, tc.cluster))
		if err != nil {
			t.Fatal(err)
		}
		sts := got.(*appsv1.StatefulSet)
		if sts.Namespace != tc.namespace || sts.Name != tc.cluster || sts.UID != types.UID("u-"+tc.namespace) ||
			sts.ResourceVersion != "9" || sts.Labels[operatorv1alpha1.ClusterLabel] != tc.cluster {
			t.Errorf("%s/%s: lost what names it: %+v", tc.namespace, tc.cluster, sts.ObjectMeta)
		}
		if sts.ManagedFields != nil {
			t.Errorf("%s/%s: kept managedFields", tc.namespace, tc.cluster)
		}
		if whole := sts.Spec.Replicas != nil && sts.Labels["app.kubernetes.io/name"] == "gnmic"; whole != tc.whole {
			t.Errorf("%s/%s: kept whole %v, want %v", tc.namespace, tc.cluster, whole, tc.whole)
		}
	}
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "team-b/telemetry"}
	if got, err := transform(tombstone); err != nil || got != tombstone {
		t.Errorf("a tombstone: %v, %v", got, err)
	}
}

// A namespace's Targets stay cached for a while after it leaves the share: a rolling update moves Clusters
// more than once, and each return would list the namespace's Targets again.
func TestLingerTargetsKeepsANamespaceThatLeftTheShareForTheLingerOnly(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	linger := 30 * time.Second
	for _, tc := range []struct {
		name     string
		inShare  bool
		leftAt   time.Time
		wantLeft time.Time
		wantKept bool
	}{
		{name: "in the share", inShare: true, wantKept: true},
		{name: "back in the share", inShare: true, leftAt: now.Add(-10 * time.Second), wantKept: true},
		{name: "just left", leftAt: time.Time{}, wantLeft: now, wantKept: true},
		{name: "left less than the linger ago", leftAt: now.Add(-29 * time.Second), wantLeft: now.Add(-29 * time.Second), wantKept: true},
		{name: "left the linger ago", leftAt: now.Add(-30 * time.Second), wantLeft: now.Add(-30 * time.Second)},
	} {
		left, kept := lingerTargets(tc.inShare, tc.leftAt, now, linger)
		if !left.Equal(tc.wantLeft) || kept != tc.wantKept {
			t.Errorf("%s: left %v, kept %v; want %v, %v", tc.name, left, kept, tc.wantLeft, tc.wantKept)
		}
	}
}

// The Targets of a namespace that left the share are kept, not served to a list across the share: that lists
// only what the replica reconciles.
func TestShareCachesListAcrossTheShareLeavesOutNamespacesThatLeft(t *testing.T) {
	s := testShareCaches(t)
	s.want = map[string][]string{"a": {"x"}}
	s.namespaces["a"] = &namespaceTargets{cache: &shareCache{cache: readerCache{}, stop: func() {}}, synced: true}
	s.namespaces["b"] = &namespaceTargets{cache: &shareCache{cache: readerCache{}, stop: func() {}}, synced: true}
	now := time.Now()
	s.stopTargetsLeft(now, time.Minute)
	if got := len(s.readers(&operatorv1alpha1.TargetList{})); got != 1 {
		t.Fatalf("%d readers of Targets across the share, want the one of namespace a", got)
	}
	if s.namespaces["b"] == nil || s.reader(&operatorv1alpha1.TargetList{}, "b") == nil {
		t.Fatal("the Targets of namespace b, which just left, are no longer cached")
	}
	s.want = map[string][]string{"a": {"x"}, "b": {"y"}}
	s.stopTargetsLeft(now.Add(time.Minute), time.Minute)
	if got := len(s.readers(&operatorv1alpha1.TargetList{})); got != 2 {
		t.Fatalf("%d readers of Targets across the share once b came back, want 2", got)
	}
	s.want = map[string][]string{"a": {"x"}}
	s.stopTargetsLeft(now.Add(2*time.Minute), time.Minute)
	s.stopTargetsLeft(now.Add(2*time.Minute+59*time.Second), time.Minute)
	if s.namespaces["b"] == nil {
		t.Fatal("the Targets of namespace b stopped before the linger ran out")
	}
	s.stopTargetsLeft(now.Add(3*time.Minute), time.Minute)
	if s.namespaces["b"] != nil {
		t.Fatal("the Targets of namespace b are still cached a linger after it left")
	}
}
