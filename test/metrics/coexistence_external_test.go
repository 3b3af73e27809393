package metrics_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"io"
	"os"
	"path/filepath"
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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/metricsadapter"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// foreignExternalAPIService is KEDA's: in a cluster running KEDA it exists before the operator starts.
const foreignExternalAPIService = "v1beta1.external.metrics.k8s.io"

// A second control plane, because the suite's own already has its external APIService owned by the
// operator: here KEDA registered v1beta1.external.metrics.k8s.io before a second operator instance starts.
var _ = Describe("coexistence with KEDA owning external.metrics.k8s.io", Ordered, func() {
	var (
		kedaEnv    *envtest.Environment
		kedaClient client.Client
		kedaConfig *rest.Config
		kedaSet    *kubernetes.Clientset
		stop       context.CancelFunc
		stopped    chan error
		logs       testenv.LogBuffer
		foreign    *unstructured.Unstructured
	)

	BeforeAll(func() {
		dir := GinkgoT().TempDir()
		args, err := testenv.AggregationLayerArgs(dir)
		Expect(err).NotTo(HaveOccurred())
		kedaEnv, kedaConfig, err = testenv.Start(testenv.Options{APIServerArgs: args})
		Expect(err).NotTo(HaveOccurred())
		scheme := runtime.NewScheme()
		Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
		Expect(operatorv1alpha1.AddToScheme(scheme)).To(Succeed())
		kedaClient, err = client.New(kedaConfig, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		kedaSet, err = kubernetes.NewForConfig(kedaConfig)
		Expect(err).NotTo(HaveOccurred())

		By("registering KEDA's external metrics APIService, with its own CA bundle")
		kedaCA, err := os.ReadFile(filepath.Join(dir, "front-proxy-ca.crt"))
		Expect(err).NotTo(HaveOccurred())
		foreign = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1",
			"kind":       "APIService",
			"metadata":   map[string]any{"name": foreignExternalAPIService},
			"spec": map[string]any{
				"group": "external.metrics.k8s.io", "version": "v1beta1",
				"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
				"caBundle": base64.StdEncoding.EncodeToString(kedaCA),
				"service":  map[string]any{"name": "keda-operator-metrics-apiserver", "namespace": "keda", "port": int64(443)},
			},
		}}
		Expect(kedaClient.Create(ctx, foreign)).To(Succeed())

		By("starting a second operator instance against that control plane")
		port := freePort()
		Expect(kedaClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}})).To(Succeed())
		exposeLocalServerIn(kedaClient, port)
		logger := zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, &logs)), zap.UseDevMode(true))
		kedaMgr, err := ctrl.NewManager(kedaConfig, ctrl.Options{
			Scheme:                 scheme,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Logger:                 logger,
			BaseContext:            func() context.Context { return log.IntoContext(context.Background(), logger) },
		})
		Expect(err).NotTo(HaveOccurred())
		opts := metricsadapter.DefaultOptions()
		opts.BindAddress = "127.0.0.1"
		opts.Port = port
		opts.ServiceNamespace = operatorNamespace
		opts.ServiceName = serviceName
		// The certificate rotator's controller is named after the Secret; names are unique per process.
		opts.CertSecret = "gnmic-operator-metrics-api-cert-keda"
		opts.CertDir = GinkgoT().TempDir()
		opts.ResyncPeriod = time.Second
		opts.DrainPeriod = 0 // nothing routes to it once the spec ends
		var managerCtx context.Context
		managerCtx, stop = context.WithCancel(ctx)
		Expect(metricsadapter.Setup(managerCtx, kedaMgr, opts)).Error().NotTo(HaveOccurred())
		stopped = make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			stopped <- kedaMgr.Start(managerCtx)
		}()
		for _, name := range []string{"v1beta1.custom.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io"} {
			Eventually(func() string { return apiServiceAvailableIn(kedaClient, name) }).WithTimeout(90*time.Second).
				WithPolling(time.Second).Should(Equal("True"), "APIService %s", name)
		}
	})

	AfterAll(func() {
		if stop != nil {
			stop()
			Eventually(stopped).WithTimeout(30 * time.Second).Should(Receive(BeNil()))
		}
		if kedaEnv != nil {
			Expect(kedaEnv.Stop()).To(Succeed())
		}
	})

	It("leaves KEDA's APIService untouched across resyncs", func() {
		before := getAPIServiceIn(kedaClient, foreignExternalAPIService)
		// Five resyncs of the second instance.
		Consistently(func() string { return getAPIServiceIn(kedaClient, foreignExternalAPIService).GetResourceVersion() }).
			WithTimeout(5 * time.Second).WithPolling(250 * time.Millisecond).Should(Equal(before.GetResourceVersion()))
		after := getAPIServiceIn(kedaClient, foreignExternalAPIService)
		Expect(after.Object["spec"]).To(Equal(before.Object["spec"]))
		service, _, _ := unstructured.NestedMap(after.Object, "spec", "service")
		Expect(service).To(HaveKeyWithValue("name", "keda-operator-metrics-apiserver"))
		Expect(service).To(HaveKeyWithValue("namespace", "keda"))
		caBundle, _, _ := unstructuredString(after, "spec", "caBundle")
		wantCA, _, _ := unstructuredString(before, "spec", "caBundle")
		Expect(caBundle).NotTo(BeEmpty())
		Expect(caBundle).To(Equal(wantCA))
		Expect(after.GetLabels()).NotTo(HaveKey("app.kubernetes.io/managed-by"))
	})

	It("reports the conflict in an Event, the conflict gauge and the log", func() {
		Eventually(func() []string {
			events, err := kedaSet.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			var notes []string
			for _, e := range events.Items {
				if e.Reason == "MetricsAPIConflict" && e.Type == corev1.EventTypeWarning &&
					e.Regarding.Name == foreignExternalAPIService {
					notes = append(notes, e.Note)
				}
			}
			return notes
		}).Should(ContainElement(ContainSubstring("keda/keda-operator-metrics-apiserver")))
		// The gauge lives in the process-wide registry: the suite's own instance owns this APIService in its
		// control plane and writes 0 on each of its resyncs (every 2s), this instance writes 1 every second.
		Eventually(conflictGauge).WithArguments(foreignExternalAPIService).Should(Equal(1.0))
		Eventually(logs.String).Should(And(
			ContainSubstring("APIService belongs to another component"),
			ContainSubstring(foreignExternalAPIService),
			ContainSubstring("keda/keda-operator-metrics-apiserver")))
	})

	It("keeps serving custom.metrics.k8s.io while KEDA serves external.metrics.k8s.io", func() {
		const ns = "keda-coexistence"
		Expect(kedaClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		edge := &operatorv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
			Spec:       operatorv1alpha1.ClusterSpec{Image: gnmic.DefaultImage},
		}
		Expect(kedaClient.Create(ctx, edge)).To(Succeed())
		edge.Status.Selector = operatorv1alpha1.ClusterLabel + "=edge"
		edge.Status.UnassignedTargets = 2
		edge.Status.TargetsCount = 9
		edge.Status.Collectors = []operatorv1alpha1.CollectorStatus{
			{Pod: "edge-0", Ready: true, Targets: 4}, {Pod: "edge-1", Ready: true, Targets: 3},
		}
		Expect(kedaClient.Status().Update(ctx, edge)).To(Succeed())
		for i := range 2 {
			Expect(kedaClient.Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("edge-%d", i),
					Labels: map[string]string{operatorv1alpha1.ClusterLabel: "edge"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gnmic", Image: gnmic.DefaultImage}}},
			})).To(Succeed())
		}

		for _, version := range []string{"v1beta1", "v1beta2"} {
			Eventually(func() (metricValues, error) {
				return getMetrics(kedaConfig, podsPath(version, ns), operatorv1alpha1.ClusterLabel+"=edge")
			}).Should(Equal(metricValues{"edge-0": "4", "edge-1": "3"}), version)
		}
		Expect(getMetrics(kedaConfig, clusterPath(ns, "edge"), "")).To(Equal(metricValues{"edge": "7"}))
		// External requests go to KEDA's Service, which this control plane does not run.
		_, err := getMetrics(kedaConfig, externalPath(ns, "unassigned_targets"), "cluster=edge")
		Expect(err).To(HaveOccurred())
		Expect(apiServiceAvailableIn(kedaClient, foreignExternalAPIService)).NotTo(Equal("True"))
	})
})

// exposeLocalServerIn is exposeLocalServer for another control plane.
func exposeLocalServerIn(c client.Client, port int) {
	Expect(c.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: serviceName},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(port)), Protocol: corev1.ProtocolTCP,
		}}},
	})).To(Succeed())
	portName, portNumber, protocol := "https", int32(port), corev1.ProtocolTCP
	Expect(c.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: operatorNamespace, Name: serviceName + "-local",
			Labels: map[string]string{discoveryv1.LabelServiceName: serviceName},
		},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &portNumber, Protocol: &protocol}},
	})).To(Succeed())
}

func getAPIServiceIn(c client.Client, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	Expect(c.Get(ctx, client.ObjectKey{Name: name}, u)).To(Succeed())
	return u
}

func apiServiceAvailableIn(c client.Client, name string) string {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		return err.Error()
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cond := range conditions {
		condition, _ := cond.(map[string]any)
		if condition["type"] == "Available" {
			return fmt.Sprint(condition["status"])
		}
	}
	return "Unknown"
}
