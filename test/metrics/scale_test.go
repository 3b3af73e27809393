package metrics_test

import (
	"fmt"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/metricsadapter"
)

// The fleet: 1,000 Clusters of 10 collector pods holding 10 targets each, 100,000 targets.
const (
	scaleClusters       = 1000
	scalePodsPerCluster = 10
	scaleTargetsPerPod  = 10
)

var _ = Describe("a metrics request at 1,000 Clusters and 100,000 targets", Ordered, func() {
	const ns = "scale"
	target := fmt.Sprintf("fleet-%04d", scaleClusters/2)

	BeforeAll(func() {
		createNamespace(ns)
		createScaleFleet(ns)
		Eventually(func() (metricValues, error) { return getMetrics(cfg, externalPath(ns, "targets_demand"), "") }).
			Should(HaveLen(scaleClusters))
	})

	It("answers within the latency budget, in-process and through kube-apiserver", func() {
		selector := operatorv1alpha1.ClusterLabel + "=" + target
		custom, external := metricsadapter.NewProviders(mgr.GetCache(), true)
		podsInfo := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true,
			Metric: metricsadapter.TargetsPresentMetric}
		podSelector := labels.SelectorFromSet(labels.Set{operatorv1alpha1.ClusterLabel: target})
		clusterSelector := labels.SelectorFromSet(labels.Set{metricsadapter.ClusterMetricLabel: target})

		inProcess := map[string]func() error{
			"in-process pods of one Cluster": func() error {
				_, err := custom.GetMetricBySelector(ctx, ns, podSelector, podsInfo, labels.Everything())
				return err
			},
			"in-process unassigned of one Cluster": func() error {
				_, err := external.GetExternalMetric(ctx, ns, clusterSelector,
					provider.ExternalMetricInfo{Metric: metricsadapter.UnassignedTargetsMetric})
				return err
			},
			"in-process unassigned of 1000 Clusters": func() error {
				_, err := external.GetExternalMetric(ctx, ns, labels.Everything(),
					provider.ExternalMetricInfo{Metric: metricsadapter.UnassignedTargetsMetric})
				return err
			},
		}
		for name, request := range inProcess {
			p50, p99 := percentiles(2000, request)
			report(name, p50, p99)
			if name != "in-process unassigned of 1000 Clusters" {
				Expect(p99).To(BeNumerically("<", 50*time.Millisecond), "%s: target 5ms, asserted generously", name)
			}
		}

		throughAPIServer := map[string]func() error{
			"kube-apiserver pods of one Cluster": func() error {
				v, err := getMetrics(cfg, podsPath("v1beta1", ns), selector)
				if err == nil && len(v) != scalePodsPerCluster {
					err = fmt.Errorf("%d pods", len(v))
				}
				return err
			},
			"kube-apiserver unassigned of one Cluster": func() error {
				_, err := getMetrics(cfg, externalPath(ns, "unassigned_targets"), "cluster="+target)
				return err
			},
			"kube-apiserver unassigned of 1000 Clusters": func() error {
				_, err := getMetrics(cfg, externalPath(ns, "unassigned_targets"), "")
				return err
			},
		}
		for name, request := range throughAPIServer {
			p50, p99 := percentiles(300, request)
			report(name, p50, p99)
			Expect(p99).To(BeNumerically("<", 2*time.Second), "%s: asserted generously on a shared machine", name)
		}
	})
})

// percentiles runs request n times in a row and returns the median and 99th percentile durations.
func percentiles(n int, request func() error) (time.Duration, time.Duration) {
	durations := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		Expect(request()).To(Succeed())
		durations = append(durations, time.Since(start))
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	return durations[n/2], durations[n*99/100]
}

func report(name string, p50, p99 time.Duration) {
	AddReportEntry(name, fmt.Sprintf("p50 %v p99 %v", p50, p99))
	fmt.Fprintf(GinkgoWriter, "LATENCY %s: p50 %v p99 %v\n", name, p50, p99)
}

// inParallel runs do(0..n-1) on a few workers.
func inParallel(n int, do func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			defer GinkgoRecover()
			for i := range next {
				do(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// createScaleFleet fills a namespace with scaleClusters Clusters of scalePodsPerCluster collector pods, each
// pod acknowledging scaleTargetsPerPod targets.
func createScaleFleet(ns string) {
	acknowledged := make([]int32, scalePodsPerCluster)
	for i := range acknowledged {
		acknowledged[i] = scaleTargetsPerPod
	}
	inParallel(scaleClusters, func(c int) {
		name := fmt.Sprintf("fleet-%04d", c)
		createCluster(ns, name, 3, acknowledged...)
		for p := range scalePodsPerCluster {
			createCollectorPod(ns, name, p)
		}
	})
}
