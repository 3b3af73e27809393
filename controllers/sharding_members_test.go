package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/controllers/sharding"
	"github.com/gnmic-operator/gnmic-operator/metricsadapter"
	"github.com/gnmic-operator/gnmic-operator/test/shardfence"
)

// shardLease is the member Lease duration of the sharding specs: short, so that a lost member's Clusters
// move within seconds.
const shardLease = 3 * time.Second

// shardConsolidateAfter is how long a member's share stays quiet before one cache of its whole share replaces
// the caches of what it gained: short, so that the specs see a member hold whole only what it owns.
const shardConsolidateAfter = 2 * time.Second

// apiCut cuts one operator replica off from kube-apiserver, as a network partition would, while it still
// reaches the collectors: requests fail, and watches already open stop delivering.
type apiCut struct{ cut atomic.Bool }

var errCutOff = errors.New("cut off from kube-apiserver")

func (a *apiCut) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if a.cut.Load() {
			return nil, errCutOff
		}
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body = &cutBody{ReadCloser: resp.Body, cut: &a.cut}
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

type cutBody struct {
	io.ReadCloser
	cut *atomic.Bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.cut.Load() {
		return 0, errCutOff
	}
	return b.ReadCloser.Read(p)
}

// shardMember is one replica of a sharded operator, in this process.
type shardMember struct {
	identity string
	// pod and lease, when set before the member starts, are its pod name (POD_NAME) and Lease duration
	// (shardLease when zero).
	pod   string
	lease time.Duration
	api   *apiCut
	reads *selectedReads
	// metrics serves the custom metrics API from the member's cache, as the operator's metrics server does.
	metrics *metricsadapter.CustomProvider
	cache   client.Reader
	// reconcilerReads is what the member's reconciler reads through: its share's caches for the Cluster objects.
	reconcilerReads client.Reader
	member          *sharding.Member
	stop            context.CancelFunc
	exited          chan error
}

// selectedReads records the lists and watches a member sends (what its caches hold) and can hold back
// those whose label selector names a given Cluster, as a slow or large list would.
type selectedReads struct {
	mu      sync.Mutex
	sent    []selectedRead
	slowFor string
	delay   time.Duration
	// slowLists is a resource whose lists are held back by delay, whatever their selector.
	slowLists string
}

// selectedRead is one list or watch: its resource, its namespace ("" for every namespace), its label selector.
type selectedRead struct{ resource, namespace, selector string }

func (s *selectedReads) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		info, err := requestInfo.NewRequestInfo(req)
		if err == nil && info.IsResourceRequest && (info.Verb == "list" || info.Verb == "watch") {
			selector := req.URL.Query().Get("labelSelector")
			s.mu.Lock()
			s.sent = append(s.sent, selectedRead{resource: info.Resource, namespace: info.Namespace, selector: selector})
			slow := (s.slowFor != "" && strings.Contains(selector, s.slowFor)) ||
				(info.Verb == "list" && s.slowLists != "" && info.Resource == s.slowLists)
			delay := s.delay
			s.mu.Unlock()
			if slow {
				time.Sleep(delay)
			}
		}
		return rt.RoundTrip(req)
	})
}

// holdBack delays every list and watch whose label selector names cluster.
func (s *selectedReads) holdBack(cluster string, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slowFor, s.delay = cluster, delay
}

// holdBackLists delays every list of resource.
func (s *selectedReads) holdBackLists(resource string, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slowLists, s.delay = resource, delay
}

func (s *selectedReads) all() []selectedRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// startShardMember runs one member as the install's ServiceAccount, with exactly the RBAC config/default
// grants it, its requests recorded in requests; before is applied to the member before it starts.
func startShardMember(name string, install *operatorInstall, requests *apiRequests, before ...func(*shardMember)) *shardMember {
	m := &shardMember{api: &apiCut{}, reads: &selectedReads{}, exited: make(chan error, 1)}
	for _, f := range before {
		f(m)
	}
	c := install.restConfig(nil)
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return m.api.wrap(m.reads.wrap(requests.wrap(rt))) }
	namespace := install.namespace
	mgr := newShardedManager(c)
	Expect(metricsadapter.IndexPodsByCluster(suiteCtx, mgr.GetFieldIndexer())).To(Succeed())
	m.metrics, _ = metricsadapter.NewProviders(mgr.GetCache(), true)
	m.cache = mgr.GetCache()
	m.identity = sharding.NewIdentity(name)
	lease := shardLease
	if m.lease > 0 {
		lease = m.lease
	}
	// As the operator wires a sharded replica (manager.go).
	member, err := sharding.New(mgr, sharding.Options{Namespace: namespace, Identity: m.identity, Pod: m.pod,
		LeaseDuration: lease, ConsolidateAfter: shardConsolidateAfter, Share: cluster.ShareKinds(),
		// The caches of the share run under the suite's tripwire too.
		NewCache: tripwires.newCache})
	Expect(err).NotTo(HaveOccurred())
	Expect(mgr.Add(member)).To(Succeed())
	r := &cluster.Reconciler{
		Client: member.Client(mgr.GetClient()), APIReader: mgr.GetAPIReader(), Scheme: scheme,
		Recorder:     mgr.GetEventRecorderFor("gnmic-operator"),
		Dialer:       &collector.PodIPDialer{HTTP: collector.DefaultHTTPClient(), UserAgent: collector.MemberUserAgent(m.identity)},
		PollInterval: 2 * time.Second,
		// As the operator's default: one slow Cluster (a collector that stopped answering) must not hold up
		// the handovers of the others.
		MaxConcurrentReconciles: 4,
		Sharding:                member,
	}
	Expect(r.SetupWithManager(mgr)).To(Succeed())
	m.member = member
	m.reconcilerReads = r.Client
	member.MarkPredecessorsDead(suiteCtx) // as the operator does before its manager starts (manager.go)
	ctx, stop := context.WithCancel(suiteCtx)
	m.stop = stop
	go func() { m.exited <- mgr.Start(ctx) }()
	return m
}

// newShardedManager is a manager as the operator builds it with --sharding (manager.go).
func newShardedManager(restConfig *rest.Config) ctrl.Manager {
	cacheOptions := cluster.CacheOptions()
	cacheOptions.ByObject = sharding.CacheByObject(cacheOptions.ByObject)
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		Cache:                  cacheOptions,
		NewCache:               tripwires.newCache,
		Logger:                 ctrl.Log,
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	return mgr
}

// targetsPresent is gnmic_targets_present of the fleet's pods as the member's custom metrics API answers it.
func (m *shardMember) targetsPresent(f *fleet) map[string]int64 {
	list, err := m.metrics.GetMetricBySelector(suiteCtx, f.ns,
		labels.SelectorFromSet(labels.Set{operatorv1alpha1.ClusterLabel: f.name}),
		provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true,
			Metric: metricsadapter.TargetsPresentMetric}, labels.Everything())
	Expect(err).NotTo(HaveOccurred())
	out := map[string]int64{}
	for _, item := range list.Items {
		out[item.DescribedObject.Name] = item.Value.Value()
	}
	return out
}

// leave stops the member the way SIGTERM does and waits for it to end.
func (m *shardMember) leave() {
	m.stop()
	Eventually(m.exited, 30*time.Second).Should(Receive(BeNil()))
}

// pushesTo lists the configuration requests (every POST) the fleets' collectors received, with the member and
// fence generation each came with.
func pushesTo(fleets ...*fleet) []shardfence.Push {
	var out []shardfence.Push
	for _, f := range fleets {
		for ordinal, col := range f.collectors {
			out = append(out, shardfence.FromRequests(f.ns, fmt.Sprintf("%s-%d", f.name, ordinal), col.Requests())...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// ownsSome waits until the member owns some of the fleets' Clusters.
func ownsSome(m *shardMember, fleets []*fleet) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		count := map[string]int{}
		for _, owner := range owners(fleets) {
			count[owner]++
		}
		g.Expect(count[m.identity]).To(BeNumerically(">", 0))
	}, 4*shardLease, 100*time.Millisecond).Should(Succeed())
}

// everyFleetConverged waits until each fleet has converged on every Target of its namespace, none unassigned.
func everyFleetConverged(fleets []*fleet) {
	GinkgoHelper()
	for _, f := range fleets {
		var targets operatorv1alpha1.TargetList
		Expect(k8sClient.List(suiteCtx, &targets, client.InNamespace(f.ns))).To(Succeed())
		f.converged(len(targets.Items), 0)
	}
}

// owners is each fleet's Cluster owner, by fleet namespace.
func owners(fleets []*fleet) map[string]string {
	out := map[string]string{}
	for _, f := range fleets {
		if s := f.cluster().Status.Shard; s != nil && !s.Drained {
			out[f.ns] = s.Owner
		}
	}
	return out
}

// noOverlap fails when a push received at or after since broke the fence: sent without a generation, at an
// older generation than one the Cluster's collectors had received, or at another member's (test/shardfence).
func noOverlap(pushes []shardfence.Push, since time.Time) {
	GinkgoHelper()
	Expect(shardfence.Violations(pushes, since)).To(BeEmpty())
}
