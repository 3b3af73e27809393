//go:build e2e

// The Helm suite installs the chart (charts/gnmic-operator) with the Helm SDK into the harness's local
// control plane, as `helm install` does, and runs the operator from the Deployment the release created
// through the pod emulator, exactly as test/e2e runs the kustomize install; fake collectors stand in for
// gNMIc. It then upgrades the release while a Cluster collects, uninstalls it and checks what is left,
// reinstalls it over the kept CRDs and uninstalls it with crds.keep=false. docs/helm.md describes what it
// proves; its figures go to test/e2e/results/helm.json.
package helm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

const (
	// namespace is the release's, another than config/default's: every reference to it is the chart's.
	namespace      = "telemetry-operator"
	deploymentName = "gnmic-operator-controller-manager"
	targets        = 20
)

var (
	ctx        context.Context
	cancel     context.CancelFunc
	cp         *harness.ControlPlane
	k8sClient  client.Client
	dyn        dynamic.Interface
	collectors *harness.Collectors
	helmChart  *chart.Chart
	helmConfig *action.Configuration

	apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// metricsAPIServices are the APIServices the operator registers at run time.
	metricsAPIServices = []string{"v1beta1.custom.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io"}
	// values are the release's values: the e2e suite's --collector-poll-interval overlay.
	values = map[string]any{"extraArgs": []any{"--collector-poll-interval=10s"}}
	fleet  = harness.Fleet{Namespace: "helm-fleet", Cluster: "telemetry", Replicas: 2}
	result figures
)

// figures are what test/e2e/results/helm.json holds.
type figures struct {
	InstallToMetricsAPIsSeconds float64  `json:"secondsFromInstallToOperatorReadyAndMetricsAPIsAvailable"`
	UpgradeToRolledOutSeconds   float64  `json:"secondsFromUpgradeToThreeUpdatedReadyReplicas"`
	UpgradeSamples              int      `json:"samplesDuringUpgrade"`
	UpgradeUncollectedMax       int      `json:"mostTargetsNotCollectedAtOneSampleDuringUpgrade"`
	UpgradeMetricsAPIRequests   int      `json:"metricsAPIRequestsDuringUpgrade"`
	UpgradeMetricsAPIFailures   int      `json:"metricsAPIRequestsFailedDuringUpgrade"`
	UninstallToNothingSeconds   float64  `json:"secondsFromUninstallToNothingLeft"`
	LeftInNamespace             []string `json:"leftInReleaseNamespaceAfterUninstall"`
	ReinstallToCollectingSecs   float64  `json:"secondsFromShardedReinstallToOperatorReady"`
	UninstallCRDsSeconds        float64  `json:"secondsFromUninstallWithoutKeepToCRDsGone"`
}

func TestHelm(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Helm suite")
}

var _ = BeforeSuite(func() {
	ctx, cancel = context.WithCancel(context.Background())
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	logf := func(format string, args ...any) {
		fmt.Fprintf(GinkgoWriter, "%s harness: "+format+"\n", append([]any{time.Now().Format("15:04:05.0")}, args...)...)
	}
	dir := GinkgoT().TempDir()
	if root := os.Getenv("E2E_STATE_DIR"); root != "" {
		Expect(os.MkdirAll(root, 0o755)).To(Succeed())
		dir = root
	}
	var err error
	// No operator CRDs: the chart installs them.
	cp, err = harness.Start(ctx, harness.Options{Dir: dir, PodCIDR: os.Getenv("E2E_POD_CIDR"), Nodes: 2, Log: logf, WithoutCRDs: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Stop)
	collectors, err = cp.StartCollectors(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(collectors.Stop)
	k8sClient, err = cp.Client()
	Expect(err).NotTo(HaveOccurred())
	dyn, err = dynamic.NewForConfig(cp.Config)
	Expect(err).NotTo(HaveOccurred())

	helmChart = loadChart(GinkgoT(), chartDir())
	// The Helm SDK as the helm command sets it up: the kubeconfig, the release namespace, releases stored
	// as Secrets.
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &cp.Kubeconfig
	ns := namespace
	flags.Namespace = &ns
	helmConfig = &action.Configuration{}
	Expect(helmConfig.Init(flags, namespace, "secret", func(format string, v ...any) {
		fmt.Fprintf(GinkgoWriter, "helm: "+format+"\n", v...)
	})).To(Succeed())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	dir := filepath.Join(repoRoot(), "test", "e2e", "results")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		data, _ := json.MarshalIndent(result, "", "  ")
		_ = os.WriteFile(filepath.Join(dir, "helm.json"), append(data, '\n'), 0o644)
		fmt.Fprintf(GinkgoWriter, "helm: %s\n", data)
	}
})

// installRelease is `helm install gnmic-operator charts/gnmic-operator -n telemetry-operator --create-namespace`
// with vals, then the pod emulator on the release's Deployment; it returns once the replicas are ready and
// the metrics APIServices available.
func installRelease(vals map[string]any) *release.Release {
	install := action.NewInstall(helmConfig)
	install.ReleaseName, install.Namespace, install.CreateNamespace = releaseName, namespace, true
	install.Timeout = 2 * time.Minute
	rel, err := install.RunWithContext(ctx, helmChart, vals)
	Expect(err).NotTo(HaveOccurred())
	Expect(rel.Info.Status).To(Equal(release.StatusDeployed))
	Expect(cp.RunOperatorDeployment(ctx, namespace, deploymentName, harness.OperatorOptions{}, time.Minute)).To(Succeed())
	Expect(cp.WaitForOperator(ctx)).To(Succeed())
	return rel
}

// uncollected counts the fleet's targets that no collector collects, or that more than one holds.
func uncollected(want int) int {
	holders := map[string]int{}
	collecting := map[string]bool{}
	for _, runs := range collectors.Runs(fleet.Namespace) {
		for t, c := range runs {
			holders[t]++
			collecting[t] = collecting[t] || c
		}
	}
	missing := 0
	for i := range want {
		t := harness.TargetName(i)
		if holders[t] != 1 || !collecting[t] {
			missing++
		}
	}
	return missing
}

func expectCollecting(want int) {
	Eventually(func() int { return uncollected(want) }).WithTimeout(2*time.Minute).Should(BeZero(),
		"targets of %d not collected by exactly one collector", want)
}

// leftovers lists what of the release is still there: the metrics APIServices, cluster-scoped RBAC,
// admission policies and webhooks labelled as the operator's, the kube-system binding, and in the release
// namespace the objects the chart creates and the release's own Secrets.
func leftovers() []string {
	var left []string
	for _, name := range metricsAPIServices {
		if _, err := dyn.Resource(apiServices).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "APIService/"+name)
		}
	}
	labelled := metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=gnmic-operator"}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
	} {
		list, err := dyn.Resource(gvr).List(ctx, labelled)
		Expect(err).NotTo(HaveOccurred())
		for _, item := range list.Items {
			left = append(left, gvr.Resource+"/"+item.GetName())
		}
	}
	if _, err := cp.Clientset.RbacV1().RoleBindings("kube-system").Get(ctx, "gnmic-operator-metrics-adapter-auth-reader", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		left = append(left, "RoleBinding/kube-system/gnmic-operator-metrics-adapter-auth-reader")
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "apps", Version: "v1", Resource: "replicasets"},
		{Version: "v1", Resource: "pods"},
		{Version: "v1", Resource: "services"},
		{Version: "v1", Resource: "serviceaccounts"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	} {
		list, err := dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, item := range list.Items {
			if gvr.Resource == "serviceaccounts" && item.GetName() == "default" {
				continue
			}
			left = append(left, gvr.Resource+"/"+namespace+"/"+item.GetName())
		}
	}
	secrets, err := cp.Clientset.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	Expect(err).NotTo(HaveOccurred())
	for _, s := range secrets.Items {
		left = append(left, "Secret/"+namespace+"/"+s.Name)
	}
	return left
}

// operatorCRDs lists the operator.gnmic.dev CRDs.
// chartCRDs is how many CRDs the chart installs: one template each in templates/crds.
func chartCRDs() int {
	files, err := filepath.Glob(filepath.Join(chartDir(), "templates", "crds", "*.operator.gnmic.dev.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty())
	return len(files)
}

func operatorCRDs() []string {
	list, err := dyn.Resource(crdResource).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, crd := range list.Items {
		if strings.HasSuffix(crd.GetName(), ".operator.gnmic.dev") {
			out = append(out, crd.GetName())
		}
	}
	sort.Strings(out)
	return out
}

var _ = Describe("The Helm chart", Ordered, func() {
	It("installs with the Helm SDK and runs the operator from its Deployment", func() {
		started := time.Now()
		rel := installRelease(values)
		result.InstallToMetricsAPIsSeconds = time.Since(started).Round(100 * time.Millisecond).Seconds()
		Expect(operatorCRDs()).To(HaveLen(chartCRDs()))

		By("the replicas run the chart's arguments with the release's ServiceAccount")
		replicas := cp.OperatorReplicas()
		Expect(replicas).To(HaveLen(2))
		for _, r := range replicas {
			argv, err := harness.ProcessArgv(r.PID)
			Expect(err).NotTo(HaveOccurred())
			Expect(argv).To(ContainElements("--leader-elect", "--collector-poll-interval=10s"))
			env, err := harness.ProcessEnv(r.PID)
			Expect(err).NotTo(HaveOccurred())
			Expect(env).To(HaveKeyWithValue("POD_NAMESPACE", namespace))
		}

		By("the metrics APIServices point at the release's Service and are owned by its ClusterRoleBindings")
		for _, name := range metricsAPIServices {
			Eventually(func(g Gomega) {
				u, err := dyn.Resource(apiServices).Get(ctx, name, metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				service, _, _ := unstructured.NestedString(u.Object, "spec", "service", "namespace")
				g.Expect(service).To(Equal(namespace))
				var owners []string
				for _, ref := range u.GetOwnerReferences() {
					owners = append(owners, ref.Kind+"/"+ref.Name)
				}
				g.Expect(owners).To(ContainElement("ClusterRoleBinding/gnmic-operator-manager-rolebinding"))
			}).WithTimeout(time.Minute).Should(Succeed())
		}
		Expect(rel.Manifest).NotTo(ContainSubstring("gnmic-operator-system"))

		By("what the uninstall checks look for is there while the release is")
		Expect(leftovers()).To(ContainElements(
			"APIService/v1beta1.custom.metrics.k8s.io", "APIService/v1beta1.external.metrics.k8s.io",
			"clusterroles/gnmic-operator-manager-role", "clusterrolebindings/gnmic-operator-manager-rolebinding",
			"validatingadmissionpolicies/gnmic-operator-secret-writes", "validatingadmissionpolicybindings/gnmic-operator-secret-writes",
			"validatingadmissionpolicies/gnmic-operator-target-writes", "validatingadmissionpolicybindings/gnmic-operator-target-writes",
			"RoleBinding/kube-system/gnmic-operator-metrics-adapter-auth-reader",
			"deployments/"+namespace+"/"+deploymentName, "services/"+namespace+"/gnmic-operator-metrics-api",
			"serviceaccounts/"+namespace+"/"+deploymentName, "rolebindings/"+namespace+"/gnmic-operator-leader-election-rolebinding",
			"Secret/"+namespace+"/sh.helm.release.v1."+releaseName+".v1"))
	})

	It("reconciles a Cluster whose targets all collect", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectCollecting(targets)
	})

	It("upgrades to 3 replicas and other resources: the operator rolls over, the Cluster keeps collecting, the metrics API keeps answering", func() {
		upgraded := map[string]any{
			"extraArgs": values["extraArgs"],
			"replicas":  3,
			"resources": map[string]any{"requests": map[string]any{"cpu": "150m"}},
		}
		// The metrics API is asked through kube-apiserver, as the HorizontalPodAutoscaler asks it, and collection
		// sampled, until the rollout is over.
		requests := cp.MonitorMetricsAPI(ctx, "/apis/external.metrics.k8s.io/v1beta1/namespaces/"+fleet.Namespace+"/unassigned_targets", 250*time.Millisecond)
		var mu sync.Mutex
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				case <-time.After(250 * time.Millisecond):
				}
				missing := uncollected(targets)
				mu.Lock()
				result.UpgradeSamples++
				result.UpgradeUncollectedMax = max(result.UpgradeUncollectedMax, missing)
				mu.Unlock()
			}
		}()

		started := time.Now()
		upgrade := action.NewUpgrade(helmConfig)
		upgrade.Namespace = namespace
		rel, err := upgrade.RunWithContext(ctx, releaseName, helmChart, upgraded)
		Expect(err).NotTo(HaveOccurred())
		Expect(rel.Version).To(Equal(2))
		Eventually(func(g Gomega) {
			d, err := cp.Clientset.AppsV1().Deployments(namespace).Get(ctx, deploymentName, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			g.Expect(d.Status.UpdatedReplicas).To(BeEquivalentTo(3))
			g.Expect(d.Status.ReadyReplicas).To(BeEquivalentTo(3))
			g.Expect(d.Status.Replicas).To(BeEquivalentTo(3), "old replicas still there")
			ready := 0
			for _, r := range cp.OperatorReplicas() {
				if r.Ready && r.PID != 0 {
					ready++
				}
			}
			g.Expect(ready).To(Equal(3))
		}).WithTimeout(4 * time.Minute).WithPolling(time.Second).Should(Succeed())
		result.UpgradeToRolledOutSeconds = time.Since(started).Round(100 * time.Millisecond).Seconds()
		close(done)
		wg.Wait()
		metrics := requests.Stop()
		result.UpgradeMetricsAPIRequests, result.UpgradeMetricsAPIFailures = metrics.Requests, metrics.Failures

		mu.Lock()
		defer mu.Unlock()
		Expect(result.UpgradeUncollectedMax).To(BeZero(), "targets stopped collecting during the upgrade")
		Expect(metrics.Failures).To(BeZero(), "metrics API requests failed during the upgrade (seconds from its start): %v", metrics.FailureLog)
		for _, r := range cp.OperatorReplicas() {
			if r.PID == 0 {
				continue
			}
			env, err := harness.ProcessEnv(r.PID)
			Expect(err).NotTo(HaveOccurred())
			Expect(env).To(HaveKeyWithValue("POD_NAMESPACE", namespace))
		}

		By("the upgraded operator reconciles new targets")
		Expect(fleet.AddTargets(ctx, k8sClient, targets, targets+10)).To(Succeed())
		expectCollecting(targets + 10)
	})

	It("uninstalls leaving nothing but the kept CRDs, the users' resources and the namespace's run-time objects", func() {
		started := time.Now()
		uninstall := action.NewUninstall(helmConfig)
		_, err := uninstall.Run(releaseName)
		Expect(err).NotTo(HaveOccurred())
		var left []string
		Eventually(func() []string { left = leftovers(); return left }).WithTimeout(2*time.Minute).Should(BeEmpty(),
			"left after helm uninstall")
		result.UninstallToNothingSeconds = time.Since(started).Round(100 * time.Millisecond).Seconds()
		cp.StopOperatorEmulator()
		out, err := cp.Kubectl(ctx, "api-resources")
		Expect(err).NotTo(HaveOccurred(), "discovery after helm uninstall: %s", out)

		By("the CRDs stay (crds.keep), and with them the Cluster")
		Expect(operatorCRDs()).To(HaveLen(chartCRDs()))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster}, &operatorv1alpha1.Cluster{})).To(Succeed())

		By("the release namespace keeps only what the operator created at run time")
		secrets, err := cp.Clientset.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, s := range secrets.Items {
			result.LeftInNamespace = append(result.LeftInNamespace, "Secret/"+s.Name)
		}
		leases, err := cp.Clientset.CoordinationV1().Leases(namespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, l := range leases.Items {
			result.LeftInNamespace = append(result.LeftInNamespace, "Lease/"+l.Name)
		}
		Expect(result.LeftInNamespace).To(ConsistOf("Secret/gnmic-operator-metrics-api-cert",
			"Secret/gnmic-operator-targetsource-push-cert", "Lease/"+harness.OperatorLeaseName))
	})

	// The switch to sharding made the documented way (docs/helm.md): with no replica of the other mode running.
	It("reinstalls over the kept CRDs, sharded and watching the fleet's namespace only, and takes the Cluster back", func() {
		started := time.Now()
		installRelease(map[string]any{
			"extraArgs":       values["extraArgs"],
			"crds":            map[string]any{"keep": false},
			"sharding":        map[string]any{"enabled": true},
			"watchNamespaces": []any{fleet.Namespace},
		})
		result.ReinstallToCollectingSecs = time.Since(started).Round(100 * time.Millisecond).Seconds()
		for _, r := range cp.OperatorReplicas() {
			argv, err := harness.ProcessArgv(r.PID)
			Expect(err).NotTo(HaveOccurred())
			Expect(argv).To(ContainElements("--sharding", "--watch-namespace="+fleet.Namespace))
			Expect(argv).NotTo(ContainElement("--leader-elect"))
		}
		Expect(fleet.AddTargets(ctx, k8sClient, targets+10, targets+15)).To(Succeed())
		expectCollecting(targets + 15)
		Eventually(func(g Gomega) {
			var cluster operatorv1alpha1.Cluster
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster}, &cluster)).To(Succeed())
			g.Expect(cluster.Status.Shard).NotTo(BeNil(), "no replica of the sharded operator owns the Cluster")
			g.Expect(cluster.Status.Shard.Owner).NotTo(BeEmpty())
		}).WithTimeout(time.Minute).Should(Succeed())
	})

	It("uninstalls with crds.keep=false and removes the CRDs too", func() {
		started := time.Now()
		_, err := action.NewUninstall(helmConfig).Run(releaseName)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []string { return append(leftovers(), operatorCRDs()...) }).WithTimeout(2 * time.Minute).Should(BeEmpty())
		result.UninstallCRDsSeconds = time.Since(started).Round(100 * time.Millisecond).Seconds()
		cp.StopOperatorEmulator()
		out, err := cp.Kubectl(ctx, "api-resources")
		Expect(err).NotTo(HaveOccurred(), "discovery after helm uninstall: %s", out)
	})
})
