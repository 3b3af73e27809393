package cluster

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// The specs of this suite run the Cluster reconciler's own writes against a real kube-apiserver, one call at
// a time: what a Target status patch leaves in the Target. The reconciler run as main wires it is the envtest
// suite of controllers/.
var (
	env       *envtest.Environment
	k8sClient client.Client
	suiteCtx  context.Context
	cancel    context.CancelFunc
	// restConfig and scheme reach the API server for specs that run their own cache.
	restConfig *rest.Config
	scheme     *runtime.Scheme
)

func TestClusterWrites(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Cluster reconciler writes suite")
}

var _ = BeforeSuite(func() {
	scheme = runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(operatorv1alpha1.AddToScheme(scheme))
	suiteCtx, cancel = context.WithCancel(context.Background())
	e, cfg, err := testenv.Start(testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	env, restConfig = e, cfg
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
