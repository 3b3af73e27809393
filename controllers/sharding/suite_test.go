package sharding

import (
	"context"
	"sync/atomic"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// The specs of this suite run sharding's own parts against a real kube-apiserver: a takeover's writes, the
// caches of a share. The operator's replicas sharing Clusters end to end are the envtest suite of controllers/
// and test/e2e/sharding.
var (
	env          *envtest.Environment
	cfg          *rest.Config
	k8sClient    client.Client
	scheme       = runtime.NewScheme()
	suiteCtx     context.Context
	cancel       context.CancelFunc
	namespaceSeq atomic.Int32
)

func TestSharding(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Sharding suite")
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
