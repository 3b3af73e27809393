package metricsadapter

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

const testNamespace = "telemetry"

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// cluster builds a Cluster whose pods <name>-0… acknowledged the given numbers of targets.
func cluster(name string, unassigned int32, acknowledged ...int32) *operatorv1alpha1.Cluster {
	c := &operatorv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name},
		Spec:       operatorv1alpha1.ClusterSpec{Image: "gnmic"},
	}
	c.Status.Selector = operatorv1alpha1.ClusterLabel + "=" + name
	c.Status.UnassignedTargets = unassigned
	total := unassigned
	for i, n := range acknowledged {
		pod := fmt.Sprintf("%s-%d", name, i)
		c.Status.Collectors = append(c.Status.Collectors, operatorv1alpha1.CollectorStatus{
			Pod: pod, UID: string(podUID(pod)), Ready: true, Targets: n,
		})
		total += n
	}
	c.Status.TargetsCount = total
	return c
}

// labelled gives a Cluster its own labels, as a user would in its metadata.
func labelled(c *operatorv1alpha1.Cluster, own map[string]string) *operatorv1alpha1.Cluster {
	c.Labels = own
	return c
}

func podUID(name string) types.UID { return types.UID("uid-" + name) }

// collectorPod builds a collector pod of a Cluster.
func collectorPod(clusterName string, ordinal int) *corev1.Pod {
	name := fmt.Sprintf("%s-%d", clusterName, ordinal)
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: testNamespace, Name: name, UID: podUID(name),
		Labels: map[string]string{operatorv1alpha1.ClusterLabel: clusterName},
	}}
}

// fakeReader is a client over objects, with the pod index Setup registers on the cache.
func fakeReader(t testing.TB, objects ...client.Object) client.Reader {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := operatorv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).
		WithIndex(&corev1.Pod{}, podClusterIndex, func(o client.Object) []string {
			if name, ok := o.GetLabels()[operatorv1alpha1.ClusterLabel]; ok {
				return []string{name}
			}
			return nil
		}).Build()
}

func testProviders(reader client.Reader) (*CustomProvider, *ExternalProvider) {
	custom, external := NewProviders(reader, true)
	custom.now = func() time.Time { return fixedNow }
	external.now = func() time.Time { return fixedNow }
	return custom, external
}

// testHandler is the metrics API server's HTTP handler without authentication, authorization and TLS:
// what remains is exactly the request path of a served metrics request.
func testHandler(t testing.TB, reader client.Reader) http.Handler {
	t.Helper()
	custom, external := testProviders(reader)
	config := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	config.ExternalAddress = "localhost:443"
	config.LoopbackClientConfig = &rest.Config{Host: "https://localhost:443"}
	factory := informers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	server, err := newAdapterServer(config, factory, custom, external)
	if err != nil {
		t.Fatal(err)
	}
	return server.GenericAPIServer.Handler
}

// get serves one GET through handler.
func get(handler http.Handler, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}
