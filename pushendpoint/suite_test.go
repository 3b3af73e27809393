package pushendpoint_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/targetsource"
	"github.com/gnmic-operator/gnmic-operator/pushendpoint"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

const operatorNamespace = "gnmic-operator-system"

var (
	env       *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	ctx       context.Context
	cancel    context.CancelFunc
	// replicas are the addresses of two operator replicas' push endpoints (two managers, as two pods).
	replicas []string
	// httpsClient trusts the managed CA and expects the Service's name in the certificate.
	httpsClient *http.Client
)

func TestPushEndpoint(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "TargetSource push endpoint suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	var err error
	env, cfg, err = testenv.Start(testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: newScheme()})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}})).To(Succeed())

	// The first replica syncs the TargetSources, as the leader does; both serve the endpoint.
	replicas = append(replicas, startReplica(true), startReplica(false))
	var secret corev1.Secret
	Eventually(func() error {
		return k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorNamespace, Name: "gnmic-operator-targetsource-push-cert"}, &secret)
	}).Should(Succeed())
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(secret.Data["ca.crt"])).To(BeTrue())
	httpsClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, ServerName: "gnmic-operator-targetsource-push." + operatorNamespace + ".svc",
	}}}
	for _, addr := range replicas {
		Eventually(func() error {
			resp, err := httpsClient.Get("https://" + addr + "/")
			if err == nil {
				resp.Body.Close()
			}
			return err
		}).Should(Succeed(), "replica %s serves with the managed certificate", addr)
	}
})

var _ = AfterSuite(func() {
	cancel()
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(s)).To(Succeed())
	Expect(operatorv1alpha1.AddToScheme(s)).To(Succeed())
	return s
}

// startReplica runs a manager with the push endpoint, as one operator pod, and returns the endpoint's address.
// syncs adds the TargetSource controller.
func startReplica(syncs bool) string {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 newScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	Expect(err).NotTo(HaveOccurred())
	opts := pushendpoint.DefaultOptions()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort())
	opts.BindAddress, opts.ServiceNamespace, opts.ResyncPeriod = addr, operatorNamespace, time.Second
	Expect(pushendpoint.Setup(ctx, mgr, opts, nil)).To(Succeed())
	if syncs {
		Expect(targetsource.NewReconciler(mgr).SetupWithManager(mgr)).To(Succeed())
	}
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	return addr
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// post sends body to a replica's endpoint path with the headers, and returns the status and answer.
func post(replica, path, body string, header map[string]string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodPost, "https://"+replica+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := httpsClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(answer)
}
