package targetsource_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/targetsource"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// The TargetSource controller against a real kube-apiserver, fed by test/fakenetbox. Every replica of the
// operator in these specs is a manager with its own TargetSource reconciler, its writes counted.
var (
	env          *envtest.Environment
	cfg          *rest.Config
	k8sClient    client.Client
	scheme       = runtime.NewScheme()
	suiteCtx     context.Context
	cancel       context.CancelFunc
	namespaceSeq atomic.Int32
)

func TestTargetSource(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "TargetSource suite")
}

var _ = BeforeSuite(func() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(operatorv1alpha1.AddToScheme(scheme))
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter)))
	suiteCtx, cancel = context.WithCancel(context.Background())
	var err error
	env, cfg, err = testenv.Start(testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	cancel()
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// replica is one operator replica running the TargetSource controller, with the writes it sent.
type replica struct {
	rec    *targetsource.Reconciler
	writes *targetWrites
	// name is its member name; it is running (MemberRunning) from its start to its Stop.
	name string
	// assigned says whether this replica syncs TargetSources (its shard's answer); true unless changed.
	assigned atomic.Bool
	// onMembersChanged are the functions the reconciler registered; membersChanged calls them.
	mu               sync.Mutex
	onMembersChanged []func()
	stop             context.CancelFunc
	done             chan struct{}
}

// runningMembers are the member names of the replicas started and not stopped, and those a spec declares
// running.
var runningMembers sync.Map

func (r *replica) Assigned(string) bool { return r.assigned.Load() }

func (r *replica) MemberName() string { return r.name }

func (r *replica) MemberRunning(member string) bool {
	_, ok := runningMembers.Load(member)
	return ok
}

func (r *replica) OnMembersChanged(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onMembersChanged = append(r.onMembersChanged, f)
}

// membersChanged tells the replica's reconciler that the members changed, as its shard would after a round.
func (r *replica) membersChanged() {
	r.mu.Lock()
	fs := slices.Clone(r.onMembersChanged)
	r.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

var replicaSeq atomic.Int32

// startReplica runs a manager with the TargetSource controller, at the operator's default client rate
// (--kube-api-qps 1000, --kube-api-burst 2000), or at TARGETSOURCE_KUBE_API_QPS and TARGETSOURCE_KUBE_API_BURST
// when a benchmark sets them.
func startReplica() *replica {
	r := &replica{writes: &targetWrites{counts: map[string]int{}}, done: make(chan struct{}),
		name: fmt.Sprintf("replica-%d", replicaSeq.Add(1))}
	r.assigned.Store(true)
	runningMembers.Store(r.name, true)
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 1000, 2000
	if qps, err := strconv.ParseFloat(os.Getenv("TARGETSOURCE_KUBE_API_QPS"), 32); err == nil {
		c.QPS = float32(qps)
	}
	if burst, err := strconv.Atoi(os.Getenv("TARGETSOURCE_KUBE_API_BURST")); err == nil {
		c.Burst = burst
	}
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &countingTransport{next: rt, writes: r.writes} })
	mgr, err := ctrl.NewManager(c, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	rec := targetsource.NewReconciler(mgr)
	rec.Shard = r
	r.rec = rec
	Expect(rec.SetupWithManager(mgr)).To(Succeed())
	ctx, stop := context.WithCancel(suiteCtx)
	r.stop = stop
	go func() {
		defer GinkgoRecover()
		defer close(r.done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	return r
}

func (r *replica) Stop() {
	r.stop()
	<-r.done
	runningMembers.Delete(r.name)
}

// targetWrites counts the writes of Targets a replica sent, by namespace and verb (POST, PUT, PATCH, DELETE).
type targetWrites struct {
	mu     sync.Mutex
	counts map[string]int // "<namespace> <verb>"
}

func (w *targetWrites) of(namespace string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, n := range w.counts {
		if ns, verb, _ := strings.Cut(k, " "); ns == namespace {
			out[verb] = n
		}
	}
	return out
}

type countingTransport struct {
	next   http.RoundTripper
	writes *targetWrites
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// /apis/operator.gnmic.dev/v1alpha1/namespaces/<ns>/targets[/<name>]
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if req.Method != http.MethodGet && len(parts) >= 6 && parts[1] == operatorv1alpha1.GroupVersion.Group && parts[5] == "targets" {
		t.writes.mu.Lock()
		t.writes.counts[parts[4]+" "+req.Method]++
		t.writes.mu.Unlock()
	}
	return t.next.RoundTrip(req)
}

func newNamespace() string {
	name := fmt.Sprintf("ts-%d", namespaceSeq.Add(1))
	Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}
