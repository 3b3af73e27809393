package targetsource_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/hostile"
)

// serveHostile answers every request with body(), with header set.
func serveHostile(header http.Header, body func() io.Reader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range header {
			w.Header()[k] = vs
		}
		_, _ = io.Copy(w, body())
	})
}

// The figures of the budgets (SECURITY-LIMITS, docs/security.md): `make bench-budgets` syncs a TargetSource of
// each hostile inventory through the reconciler and prints the process's peak resident memory meanwhile.
// Skipped otherwise: the CEL and slowloris cases take their deadlines.
var _ = Describe("Budgets bench: hostile inventories", Ordered, func() {
	var (
		r  *replica
		ns string
	)
	BeforeAll(func() {
		if os.Getenv("BENCH_BUDGETS") == "" {
			Skip("make bench-budgets runs it")
		}
		r = startReplica()
		DeferCleanup(r.Stop)
		ns = newNamespace()
	})

	gzipHeader := http.Header{"Content-Encoding": {"gzip"}}
	costly := `string(lists.range(100000).map(i, lists.range(100).map(j, i*j)).size()) + "x"`
	for _, tc := range []struct {
		name, source, budget string
		handler              http.Handler
		change               func(*operatorv1alpha1.TargetSource)
	}{
		{name: "gzip of records inflating to 1 GiB", source: "gzip-records", budget: "sync.maxRecords",
			handler: serveHostile(gzipHeader, hostile.GzipRecords(1<<30))},
		{name: "gzip of one record of 1 GiB of blanks", source: "gzip-blanks", budget: "maxPageBytes",
			handler: serveHostile(gzipHeader, hostile.GzipBlankRecord(1<<30))},
		{name: "10 million records", source: "ten-million", budget: "sync.maxRecords",
			handler: serveHostile(nil, func() io.Reader { return hostile.Records(10_000_000) })},
		{name: "CEL at its cost limit on each of 100,000 records", source: "cel-loop", budget: "sync.mappingTimeout",
			handler: serveHostile(nil, func() io.Reader { return hostile.Records(100_000) }),
			change:  func(ts *operatorv1alpha1.TargetSource) { ts.Spec.Mapping.Name = costly }},
		{name: "slowloris (a byte every 100ms, timeout 10s)", source: "slowloris", budget: "timeout",
			handler: hostile.Slowloris(100 * time.Millisecond),
			change: func(ts *operatorv1alpha1.TargetSource) {
				ts.Spec.HTTP.Timeout = &metav1.Duration{Duration: 10 * time.Second}
			}},
	} {
		It("fails the sync of "+tc.name+" with BudgetExceeded ("+tc.budget+")", func() {
			server := httptest.NewServer(tc.handler)
			DeferCleanup(server.Close)
			ts := &operatorv1alpha1.TargetSource{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.source},
				Spec: operatorv1alpha1.TargetSourceSpec{
					HTTP:    &operatorv1alpha1.HTTPInventory{URL: server.URL, RecordsField: "results", Interval: &metav1.Duration{Duration: time.Hour}},
					Mapping: operatorv1alpha1.TargetMapping{Defaults: operatorv1alpha1.TargetDefaults{Profile: "p"}},
				},
			}
			if tc.change != nil {
				tc.change(ts)
			}
			var synced metav1.Condition
			start := time.Now()
			rss := hostile.MeasureRSS(func() {
				Expect(k8sClient.Create(suiteCtx, ts)).To(Succeed())
				Eventually(func(g Gomega) {
					synced = condition(source(g, ts), operatorv1alpha1.ConditionSynced)
					g.Expect(synced.Reason).To(Equal(operatorv1alpha1.ReasonBudgetExceeded))
				}, 3*time.Minute, 50*time.Millisecond).Should(Succeed())
			})
			GinkgoWriter.Printf("bench: %-50s %-22s %s, failed after %5.1fs\n", tc.name, tc.budget, rss, time.Since(start).Seconds())
			Expect(synced.Message).To(ContainSubstring("(" + tc.budget + ")"))
			Expect(targets(ns)).To(BeEmpty())
			Expect(k8sClient.Delete(suiteCtx, ts)).To(Succeed())
		})
	}
})
