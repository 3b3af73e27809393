package metricsadapter

import (
	"context"
	"fmt"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// The fleet of the scale benchmark: 1,000 Clusters of 10 collector pods holding 10 targets each, 100,000
// targets and 10,000 pods in one namespace, as in test/metrics.
const (
	benchClusters       = 1000
	benchPodsPerCluster = 10
	benchTargetsPerPod  = 10
	benchUnassigned     = 3
)

// BenchmarkMetricsRequestAtFleetScale measures the requests the HorizontalPodAutoscaler sends, answered
// from a real informer cache filled by a real kube-apiserver (envtest), first by the providers, then by the
// metrics API server's HTTP handler (without TLS, authentication and authorization, which testHandler
// leaves out). Filling the fleet takes about half a minute; the benchmark runs only with -bench:
//
//	GOTOOLCHAIN=local go test ./metricsadapter -run '^$' -bench MetricsRequestAtFleetScale -benchtime 5000x
//
// Besides ns/op it reports the median and 99th percentile of single requests (p50-ns, p99-ns).
func BenchmarkMetricsRequestAtFleetScale(b *testing.B) {
	reader := startFleetCache(b)
	custom, external := NewProviders(reader, true)
	target := fmt.Sprintf("fleet-%04d", benchClusters/2)
	podSelector := labels.SelectorFromSet(labels.Set{operatorv1alpha1.ClusterLabel: target})
	clusterSelector := labels.SelectorFromSet(labels.Set{ClusterMetricLabel: target})
	handler := testHandler(b, reader)
	ctx := context.Background()

	b.Run("providers/pods-of-one-cluster", func(b *testing.B) {
		benchmarkRequests(b, func() error {
			list, err := custom.GetMetricBySelector(ctx, testNamespace, podSelector, podsInfo(), labels.Everything())
			if err == nil && len(list.Items) != benchPodsPerCluster {
				err = fmt.Errorf("%d pods, want %d", len(list.Items), benchPodsPerCluster)
			}
			return err
		})
	})
	b.Run("providers/unassigned-of-one-cluster", func(b *testing.B) {
		benchmarkRequests(b, func() error {
			list, err := external.GetExternalMetric(ctx, testNamespace, clusterSelector,
				provider.ExternalMetricInfo{Metric: UnassignedTargetsMetric})
			if err == nil && (len(list.Items) != 1 || list.Items[0].Value.Value() != benchUnassigned) {
				err = fmt.Errorf("unexpected answer %+v", list.Items)
			}
			return err
		})
	})
	b.Run("handler/pods-of-one-cluster", func(b *testing.B) {
		path := podsPath("v1beta1", operatorv1alpha1.ClusterLabel+"="+target)
		benchmarkRequests(b, func() error { return expectOK(get(handler, path).Code, path) })
	})
	b.Run("handler/unassigned-of-one-cluster", func(b *testing.B) {
		path := externalPath(UnassignedTargetsMetric, "cluster="+target)
		benchmarkRequests(b, func() error { return expectOK(get(handler, path).Code, path) })
	})
}

func expectOK(code int, path string) error {
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: %d", path, code)
	}
	return nil
}

// benchmarkRequests runs request b.N times and reports the median and 99th percentile besides ns/op.
func benchmarkRequests(b *testing.B, request func() error) {
	b.ReportAllocs()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := request(); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(durations[len(durations)*99/100].Nanoseconds()), "p99-ns")
}

// startFleetCache starts envtest, writes the fleet through kube-apiserver and returns a started informer
// cache over it with the pod index Setup registers. Everything stops when b ends.
func startFleetCache(b *testing.B) client.Reader {
	b.Helper()
	env, cfg, err := testenv.Start(testenv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := env.Stop(); err != nil {
			b.Error(err)
		}
	})
	cfg.QPS, cfg.Burst = 1000, 2000
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := operatorv1alpha1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := forEachParallel(benchClusters, func(i int) error { return createFleetCluster(ctx, c, fmt.Sprintf("fleet-%04d", i)) }); err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d Clusters and %d pods in %v", benchClusters, benchClusters*benchPodsPerCluster, time.Since(start))

	informers, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	if err := IndexPodsByCluster(ctx, informers); err != nil {
		b.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = informers.Start(ctx)
	}()
	b.Cleanup(func() { cancel(); <-stopped })
	if !informers.WaitForCacheSync(ctx) {
		b.Fatal("cache did not start")
	}
	// Listing both kinds once makes the cache start and sync their informers.
	var clusters operatorv1alpha1.ClusterList
	if err := informers.List(ctx, &clusters, client.InNamespace(testNamespace)); err != nil {
		b.Fatal(err)
	}
	var pods corev1.PodList
	if err := informers.List(ctx, &pods, client.InNamespace(testNamespace)); err != nil {
		b.Fatal(err)
	}
	if len(clusters.Items) != benchClusters || len(pods.Items) != benchClusters*benchPodsPerCluster {
		b.Fatalf("cache holds %d Clusters and %d pods", len(clusters.Items), len(pods.Items))
	}
	return informers
}

// createFleetCluster creates a Cluster whose status, as the reconciler writes it, places 10 targets on each
// of its 10 pods and leaves benchUnassigned unassigned, and creates those pods.
func createFleetCluster(ctx context.Context, c client.Client, name string) error {
	cl := &operatorv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name},
		Spec:       operatorv1alpha1.ClusterSpec{Image: gnmic.DefaultImage},
	}
	if err := c.Create(ctx, cl); err != nil {
		return err
	}
	cl.Status.Selector = operatorv1alpha1.ClusterLabel + "=" + name
	cl.Status.UnassignedTargets = benchUnassigned
	cl.Status.TargetsCount = benchUnassigned + benchPodsPerCluster*benchTargetsPerPod
	for p := range benchPodsPerCluster {
		cl.Status.Collectors = append(cl.Status.Collectors, operatorv1alpha1.CollectorStatus{
			Pod: fmt.Sprintf("%s-%d", name, p), Ready: true, Targets: benchTargetsPerPod,
		})
	}
	if err := c.Status().Update(ctx, cl); err != nil {
		return err
	}
	for p := range benchPodsPerCluster {
		err := c.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: testNamespace, Name: fmt.Sprintf("%s-%d", name, p),
				Labels: map[string]string{operatorv1alpha1.ClusterLabel: name},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gnmic", Image: gnmic.DefaultImage}}},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// forEachParallel runs do(0..n-1) on a few workers and returns the first error.
func forEachParallel(n int, do func(i int) error) error {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := do(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
