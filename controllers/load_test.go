package controllers_test

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// loadWindow is how long a steady fleet is watched; the figures are per minute.
const loadWindow = 30 * time.Second

var _ = Describe("What a steady fleet costs", func() {
	It("keeps a steady 1,000-target Cluster with 1% of its devices down from reading any Secret, and counts its requests", func() {
		const targets, pods, down = 1000, 10, 10
		f := newFleetOf(pods, fakecollector.Realistic())
		// Every tenth target's device is down: its starts fail and the operator restarts it with backoff.
		// Any collector may be given it, so every collector knows the device is down.
		for i := 0; i < down; i++ {
			for _, col := range f.collectors {
				col.DeviceDown(targetName(i*targets/down), "connection refused")
			}
		}
		f.addTargets(0, targets)
		// Other specs' fleets may still be in the API server and this operator reconciles them too: only the
		// requests about this fleet's namespace count.
		api := &loadAPICounter{namespace: f.ns, byKind: map[string]int{}}
		// The production collector poll interval: a steady fleet is looked at by events and by that backstop.
		op := startLoadOperator(api, 0)
		DeferCleanup(op.Stop)
		f.converged(targets, 0)
		// Let the first restarts of the failed targets (1 s, 2 s, 4 s … apart) pass.
		time.Sleep(15 * time.Second)

		api.reset()
		from := time.Now()
		time.Sleep(loadWindow)
		to := time.Now()
		apiByKind, apiTotal := api.snapshot()
		colByKind, colTotal := map[string]int{}, 0
		for _, col := range f.collectors {
			for _, req := range col.Requests() {
				if req.Time.Before(from) || req.Time.After(to) {
					continue
				}
				colByKind[req.Method+" "+loadCollectorPath(req.Path)]++
				colTotal++
			}
		}
		perMinute := func(n int) float64 { return float64(n) * float64(time.Minute) / float64(to.Sub(from)) }
		GinkgoWriter.Printf("steady fleet of %d targets on %d pods, %d devices down, per minute:\n", targets, pods, down)
		// A reconcile reads only the collectors whose event stream announced a change, those with changes
		// outstanding, and every collector once per poll interval.
		reads := 0
		for _, col := range f.collectors {
			reads = max(reads, loadReads(col, from, to))
		}
		GinkgoWriter.Printf("  reads of the most read collector: %.0f\n", perMinute(reads))
		GinkgoWriter.Printf("  API requests: %.0f\n", perMinute(apiTotal))
		for _, k := range loadSortedKeys(apiByKind) {
			GinkgoWriter.Printf("    %-40s %6.0f\n", k, perMinute(apiByKind[k]))
		}
		GinkgoWriter.Printf("  restart waves (distinct 100 ms slots with restarts): %.0f\n", perMinute(loadRestartWaves(f, from, to)))
		GinkgoWriter.Printf("  collector requests: %.0f\n", perMinute(colTotal))
		for _, k := range loadSortedKeys(colByKind) {
			GinkgoWriter.Printf("    %-40s %6.0f\n", k, perMinute(colByKind[k]))
		}

		f.converged(targets, 0)
		// Before the Secrets' content cache every reconcile read the credentials Secret: 22 a minute here.
		Expect(perMinute(apiTotal)).To(BeNumerically("<=", 4), "API requests a minute")
		// Before failed targets stopped causing a look every 5 s the fleet made 250 collector requests a minute,
		// 220 of them reads; when every reconcile read every collector, 100 (80 reads). Now a steady collector
		// is read once per poll, and again only after its targets changed (here: restarts of failed targets):
		// about 32 (12 reads).
		Expect(perMinute(colByKind["GET /api/v1/targets"])).To(BeNumerically("<", 50), "collector reads a minute")
		Expect(perMinute(colTotal)).To(BeNumerically("<", 90), "collector requests a minute")
	})
})

var _ = Describe("Secrets read through the content cache", func() {
	It("pushes a rotated password to the collectors: a new resourceVersion of the Secret is read again", func() {
		op := startOperator()
		DeferCleanup(op.Stop)
		f := newFleet(1, nil, "")
		f.addTargets(0, 2)
		f.converged(2, 0)
		const rotated = "r0tated-Pa55w0rd-never-logged"
		creds := &corev1.Secret{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "creds"}, creds)).To(Succeed())
		creds.Data["password"] = []byte(rotated)
		Expect(k8sClient.Update(suiteCtx, creds)).To(Succeed())
		Eventually(func(g Gomega) {
			last, ok := f.collectors[0].LastApplied()
			g.Expect(ok).To(BeTrue())
			g.Expect(last.Config.Targets).To(HaveLen(2))
			for name, t := range last.Config.Targets {
				g.Expect(t["password"]).To(Equal(rotated), "target %s", name)
			}
		}, 15*time.Second).Should(Succeed())
	})
})

// loadRestartWaves is how many distinct 100 ms slots of the window saw restarts of failed targets: restarts
// that fall due together cost one reconcile.
func loadRestartWaves(f *fleet, from, to time.Time) int {
	slots := map[int64]bool{}
	for _, col := range f.collectors {
		for _, req := range col.Requests() {
			if req.Method == http.MethodPost && strings.HasSuffix(req.Path, "/state/enabled") &&
				!req.Time.Before(from) && !req.Time.After(to) {
				slots[req.Time.UnixMilli()/100] = true
			}
		}
	}
	return len(slots)
}

// startLoadOperator runs an operator whose every request to the API server (cached reads do not reach it)
// is counted by api.
func startLoadOperator(api *loadAPICounter, poll time.Duration) *operator {
	counted := rest.CopyConfig(cfg)
	counted.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return loadRoundTripper{next: rt, count: api.count}
	}
	mgr := newManager(counted)
	r := &cluster.Reconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Scheme:       scheme,
		Recorder:     mgr.GetEventRecorderFor("gnmic-operator"),
		Dialer:       &collector.PodIPDialer{HTTP: collector.DefaultHTTPClient()},
		PollInterval: poll,
	}
	return runOperator(mgr, r)
}

// loadAPICounter counts the API requests about one namespace by verb and resource, such as "get secrets" or
// "patch targets/status".
type loadAPICounter struct {
	namespace string
	mu        sync.Mutex
	byKind    map[string]int
}

func (c *loadAPICounter) count(req *http.Request) {
	if !strings.Contains(req.URL.Path, "/namespaces/"+c.namespace+"/") {
		return
	}
	kind := loadRequestKind(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byKind[kind]++
}

func (c *loadAPICounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byKind = map[string]int{}
}

func (c *loadAPICounter) snapshot() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, total := make(map[string]int, len(c.byKind)), 0
	for k, n := range c.byKind {
		out[k] = n
		total += n
	}
	return out, total
}

type loadRoundTripper struct {
	next  http.RoundTripper
	count func(*http.Request)
}

func (t loadRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	t.count(req)
	return t.next.RoundTrip(req)
}

// loadRequestKind names an API request by its verb and resource: /api/v1/namespaces/n/secrets/s is "get
// secrets", a GET of a collection "list …" or "watch …".
func loadRequestKind(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return req.Method + " " + req.URL.Path
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return req.Method + " " + req.URL.Path
	}
	resource, named := parts[0], len(parts) > 1
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	verb := strings.ToLower(req.Method)
	switch {
	case req.Method == http.MethodGet && !named && req.URL.Query().Get("watch") == "true":
		verb = "watch"
	case req.Method == http.MethodGet && !named:
		verb = "list"
	case req.Method == http.MethodPost:
		verb = "create"
	case req.Method == http.MethodPut:
		verb = "update"
	}
	return verb + " " + resource
}

// loadCollectorPath is a collector request's path with a target's name cut off.
func loadCollectorPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "/api/v1/targets/"); ok {
		if i := strings.Index(rest, "/"); i >= 0 {
			return "/api/v1/targets/{name}" + rest[i:]
		}
		return "/api/v1/targets/{name}"
	}
	return path
}

// loadReads is how many times the collector was asked for its targets within the window.
func loadReads(col *fakecollector.Collector, from, to time.Time) int {
	n := 0
	for _, req := range col.Requests() {
		if req.Method == http.MethodGet && req.Path == "/api/v1/targets" && !req.Time.Before(from) && !req.Time.After(to) {
			n++
		}
	}
	return n
}

func loadSortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
