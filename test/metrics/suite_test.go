// Package metrics_test proves the built-in metrics APIs through kube-apiserver's aggregation layer, exactly
// as the HorizontalPodAutoscaler reaches them: a real kube-apiserver proxies to the operator's metrics
// server, which authenticates the front proxy, authorizes the caller with SubjectAccessReview and answers
// from the manager's cache. There is no reconciler here: the specs write Cluster status and Pods themselves.
package metrics_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/metricsadapter"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

const (
	operatorNamespace = "gnmic-operator-system"
	serviceName       = "gnmic-operator-metrics-api"
	// foreignAPIService exists before the operator starts and points at another component's Service.
	foreignAPIService = "v1beta2.custom.metrics.k8s.io"
)

var (
	env        *envtest.Environment
	cfg        *rest.Config
	k8sClient  client.Client
	clientset  *kubernetes.Clientset
	mgr        ctrl.Manager
	ctx        context.Context
	cancel     context.CancelFunc
	managerRun chan error
)

func TestMetricsAPIs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Metrics API suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	args, err := testenv.AggregationLayerArgs(GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	env, cfg, err = testenv.Start(testenv.Options{APIServerArgs: args})
	Expect(err).NotTo(HaveOccurred())

	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(operatorv1alpha1.AddToScheme(scheme)).To(Succeed())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())

	port := freePort()
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}})).To(Succeed())
	exposeLocalServer(port)
	Expect(k8sClient.Create(ctx, foreignAPIServiceObject())).To(Succeed())

	mgr, err = ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	Expect(err).NotTo(HaveOccurred())
	opts := metricsadapter.DefaultOptions()
	opts.BindAddress = "127.0.0.1"
	opts.Port = port
	opts.ServiceNamespace = operatorNamespace
	opts.ServiceName = serviceName
	opts.CertDir = GinkgoT().TempDir()
	opts.ResyncPeriod = 2 * time.Second
	opts.DrainPeriod = 0 // nothing routes to it once the suite ends
	Expect(metricsadapter.Setup(ctx, mgr, opts)).Error().NotTo(HaveOccurred())
	managerRun = make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		managerRun <- mgr.Start(ctx)
	}()

	By("waiting until kube-apiserver reports the operator's APIServices available")
	for _, name := range []string{"v1beta1.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io"} {
		Eventually(func() string { return apiServiceAvailable(name) }).WithTimeout(90*time.Second).
			WithPolling(time.Second).Should(Equal("True"), "APIService %s", name)
	}

	// kube-apiserver's availability checks ask for discovery only: no metric was read yet. A replica whose
	// first metric request creates the informer waits for its sync then, and forever if it is stopping.
	By("the Clusters' informer synced with the cache before any metric was asked")
	informer, err := mgr.GetCache().GetInformer(ctx, &operatorv1alpha1.Cluster{}, cache.BlockUntilSynced(false))
	Expect(err).NotTo(HaveOccurred())
	Expect(informer.HasSynced()).To(BeTrue(), "the metrics API's Clusters informer was not started with the cache")
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if managerRun != nil {
		Eventually(managerRun).WithTimeout(30 * time.Second).Should(Receive(BeNil()))
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// freePort is a TCP port nothing listens on right now.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// exposeLocalServer makes the operator's Service reach the metrics server on 127.0.0.1:port. Validation
// refuses loopback IPs in endpoints, but an FQDN EndpointSlice carrying "127.0.0.1" is accepted, and
// aggregator routing dials it.
func exposeLocalServer(port int) {
	Expect(k8sClient.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: serviceName},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(port)), Protocol: corev1.ProtocolTCP,
		}}},
	})).To(Succeed())
	portName, portNumber, protocol := "https", int32(port), corev1.ProtocolTCP
	Expect(k8sClient.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: operatorNamespace, Name: serviceName + "-local",
			Labels: map[string]string{discoveryv1.LabelServiceName: serviceName},
		},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &portNumber, Protocol: &protocol}},
	})).To(Succeed())
}

func foreignAPIServiceObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": foreignAPIService},
		"spec": map[string]any{
			"group": "custom.metrics.k8s.io", "version": "v1beta2",
			"groupPriorityMinimum": int64(100), "versionPriority": int64(200),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"name": "keda-operator-metrics-apiserver", "namespace": "keda", "port": int64(443)},
		},
	}}
	return u
}

func getAPIService(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, u)).To(Succeed())
	return u
}

func apiServiceAvailable(name string) string {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		return err.Error()
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		condition, _ := c.(map[string]any)
		if condition["type"] == "Available" {
			return fmt.Sprint(condition["status"])
		}
	}
	return "Unknown"
}
