package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

var (
	env       *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	scheme    = runtime.NewScheme()
	suiteCtx  context.Context
	cancel    context.CancelFunc
	// logs captures everything the operator logs, so that tests can check what never appears in it.
	logs = &testenv.LogBuffer{}
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Cluster controller suite")
}

var _ = BeforeSuite(func() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(operatorv1alpha1.AddToScheme(scheme))
	logger := zap.New(zap.WriteTo(logs), zap.Level(zapcore.DebugLevel))
	ctrl.SetLogger(logger)

	suiteCtx, cancel = context.WithCancel(context.Background())
	var err error
	env, cfg, err = testenv.Start(testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
})

// A failed spec's report carries the operator's last log lines, so that a failure in CI can be read without
// running the spec again.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() {
		GinkgoWriter.Printf("The operator's last 200 log lines:\n%s\n", logs.Tail(200))
	}
})

// No spec's operator changes an object in its caches (cache_tripwire_test.go): those still running are
// checked at the end of every spec, each operator once more when it stops.
var _ = AfterEach(func() {
	Expect(tripwires.mutated()).To(BeEmpty(), "objects the operator changed in its cache")
})

var _ = AfterSuite(func() {
	cancel()
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// operator is one running instance of the operator: a manager with the Cluster reconciler.
type operator struct {
	stop   context.CancelFunc
	done   chan struct{}
	writes *writeCounter
	// tripwire finds what the operator changed in its manager's cache.
	tripwire *cacheTripwire
}

// writeCounter counts the operator's API writes per namespace: every spec's fleet has its own namespace,
// while the operator also reconciles the fleets of the specs before.
type writeCounter struct {
	mu sync.Mutex
	// all counts every write, podStatus the writes of pod status (readiness gates), targetStatus those of
	// Target status.
	all, podStatus, targetStatus map[string]int64
	// made is every write per namespace, as "<verb> <Kind>/<name>[/<subresource>]: <patch>", so that a spec
	// that expects none can say which were made, and one that counts patches can read what they carried.
	made map[string][]string
	// countsOnly keeps made empty: a spec that measures the process's heap over an hour of writes (the soak)
	// must not count a record that grows with every write as the operator's.
	countsOnly bool
}

// keepCountsOnly stops recording what each write carried; the counts go on.
func (w *writeCounter) keepCountsOnly() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.countsOnly = true
	clear(w.made)
}

func (w *writeCounter) count(obj client.Object, subresource string) {
	w.record("", obj, subresource, nil)
}

// record counts a write, with its verb and, for a patch, what the patch carried.
func (w *writeCounter) record(verb string, obj client.Object, subresource string, patch client.Patch) {
	w.mu.Lock()
	countsOnly := w.countsOnly
	w.mu.Unlock()
	what := ""
	if !countsOnly { // the patch's diff is worked out outside the lock, which every status writer takes
		what = fmt.Sprintf("%s %s/%s", verb, writtenType(obj), obj.GetName())
		if subresource != "" {
			what += "/" + subresource
		}
		if patch != nil {
			if data, err := patch.Data(obj); err == nil {
				what += ": " + string(data)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.countsOnly {
		w.made[obj.GetNamespace()] = append(w.made[obj.GetNamespace()], strings.TrimSpace(what))
	}
	w.all[obj.GetNamespace()]++
	if _, ok := obj.(*corev1.Pod); ok && subresource == "status" {
		w.podStatus[obj.GetNamespace()]++
	}
	if isTarget(obj) && subresource == "status" {
		w.targetStatus[obj.GetNamespace()]++
	}
}

// writtenType names the type of a written object as its Go type does (*v1alpha1.Target), a Target patched as
// its metadata alike.
func writtenType(obj client.Object) string {
	if isTarget(obj) {
		return fmt.Sprintf("%T", &operatorv1alpha1.Target{})
	}
	return fmt.Sprintf("%T", obj)
}

// isTarget tells whether obj is a Target, whole or as its metadata (the operator patches Target status
// through the metadata client).
func isTarget(obj client.Object) bool {
	if _, ok := obj.(*operatorv1alpha1.Target); ok {
		return true
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	return ok && m.GroupVersionKind() == operatorv1alpha1.GroupVersion.WithKind("Target")
}

// targetStatusIn is how many writes of Target status went to the namespace.
func (w *writeCounter) targetStatusIn(namespace string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.targetStatus[namespace]
}

// in is how many writes went to objects of the namespace.
func (w *writeCounter) in(namespace string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all[namespace]
}

// madeIn is every write that went to objects of the namespace, described (see writeCounter.made).
func (w *writeCounter) madeIn(namespace string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.made[namespace])
}

// podStatusIn is how many of them were writes of pod status.
func (w *writeCounter) podStatusIn(namespace string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.podStatus[namespace]
}

// startOperator runs a fresh operator against the suite's apiserver until Stop, asking collectors for
// their targets' state every 2s.
func startOperator() *operator { return startOperatorPolling(2 * time.Second) }

// startOperatorPolling is startOperator with another collector poll interval, and with the reconciler's
// settings changed by configure.
func startOperatorPolling(poll time.Duration, configure ...func(*cluster.Reconciler)) *operator {
	mgr := newManager(cfg)
	counted, writes := countingClient(mgr)
	r := &cluster.Reconciler{
		Client:       counted,
		APIReader:    mgr.GetAPIReader(),
		Scheme:       scheme,
		Recorder:     mgr.GetEventRecorderFor("gnmic-operator"),
		Dialer:       &collector.PodIPDialer{HTTP: collector.DefaultHTTPClient()},
		PollInterval: poll,
		// As the shipped operator's default (--max-concurrent-reconciles): one slow Cluster left by an
		// earlier spec holds back no other.
		MaxConcurrentReconciles: 4,
	}
	for _, c := range configure {
		c(r)
	}
	op := runOperator(mgr, r)
	op.writes = writes
	return op
}

// countingClient is the manager's cached client, counting every write made through it.
func countingClient(mgr ctrl.Manager) (client.Client, *writeCounter) {
	writes := &writeCounter{all: map[string]int64{}, podStatus: map[string]int64{}, targetStatus: map[string]int64{},
		made: map[string][]string{}}
	counted := interceptor.NewClient(cachedClient{mgr.GetClient()}, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes.record("create", obj, "", nil)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes.record("update", obj, "", nil)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes.record("patch", obj, "", patch)
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			writes.record("delete", obj, "", nil)
			return c.Delete(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes.record("patch", obj, sub, patch)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			writes.record("update", obj, sub, nil)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	return counted, writes
}

// newManager is a manager as the operator builds it, for the API server that restConfig reaches.
func newManager(restConfig *rest.Config) ctrl.Manager {
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cluster.CacheOptions(),
		// The suite checks that nothing changes the objects in the cache (cache_tripwire_test.go).
		NewCache: tripwires.newCache,
		Logger:   ctrl.Log,
		// Every operator instance in a test must start from what the API says, not from a previous one.
		HealthProbeBindAddress: "0",
		// Tests restart the operator in one process; each instance registers the same controller name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	return mgr
}

// runOperator sets the reconciler up with the manager and runs it until the operator's Stop.
func runOperator(mgr ctrl.Manager, r *cluster.Reconciler) *operator {
	Expect(r.SetupWithManager(mgr)).To(Succeed())
	return runManager(mgr)
}

// runManager starts the manager and runs it until the operator's Stop.
func runManager(mgr ctrl.Manager) *operator {
	ctx, stop := context.WithCancel(suiteCtx)
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	op := &operator{stop: stop, done: done}
	if tripped, ok := mgr.GetCache().(*trippedCache); ok {
		op.tripwire = tripped.wire
	}
	return op
}

func (o *operator) Stop() {
	o.stop()
	Eventually(o.done, 30*time.Second).Should(BeClosed())
	if o.tripwire != nil {
		Expect(o.tripwire.mutated()).To(BeEmpty(), "objects the operator changed in its cache")
	}
}

// cachedClient lets the interceptor wrap the manager's cached client, which has no Watch.
type cachedClient struct{ client.Client }

func (cachedClient) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("watch is not supported through the cached client")
}
