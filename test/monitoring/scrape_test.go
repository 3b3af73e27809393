package monitoring

import (
	"context"
	"fmt"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// The inventory comes from the registry; this test checks it against what a running operator really serves.
// It builds the operator's binary, runs it against a real kube-apiserver with one Cluster, scrapes its
// /metrics as Prometheus would, and requires every family and label served to be in the inventory, and
// every per-Cluster family of the inventory to be served for that Cluster.
func TestARunningOperatorServesWhatTheInventoryLists(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the operator and starts kube-apiserver")
	}
	inv := operatorInventory(t)
	dir := t.TempDir()
	binary := filepath.Join(dir, "manager")
	// Built by the operator's own module, with the dependency versions it ships with.
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the operator: %v\n%s", err, out)
	}

	pki := t.TempDir()
	aggregation, err := testenv.AggregationLayerArgs(pki)
	if err != nil {
		t.Fatal(err)
	}
	env, cfg, err := testenv.Start(testenv.Options{APIServerArgs: aggregation})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, operatorv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	const operatorNamespace, namespace = "gnmic-operator-system", "telemetry"
	for _, ns := range []string{operatorNamespace, namespace} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	cluster := &operatorv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "edge"},
		Spec:       operatorv1alpha1.ClusterSpec{Image: gnmic.DefaultImage, Replicas: ptr.To[int32](2)},
	}
	if err := k8s.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}

	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeKubeconfig(t, cfg, kubeconfig)
	metricsPort := freePort(t)
	logPath := filepath.Join(dir, "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	op := exec.Command(binary,
		"--kubeconfig="+kubeconfig,
		"--leader-election-namespace="+operatorNamespace,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort),
		"--metrics-secure=false",
		"--metrics-api-bind-address=127.0.0.1",
		fmt.Sprintf("--metrics-api-port=%d", freePort(t)),
		"--metrics-api-cert-dir="+filepath.Join(dir, "certs"),
		"--metrics-api-service-namespace="+operatorNamespace,
		"--metrics-api-manage-apiservices=false",
	)
	op.Stdout, op.Stderr = logFile, logFile
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = op.Process.Kill(); _ = op.Wait() }()

	// Once the Cluster was reconciled its counters exist (at 0) and its status feeds the placement gauges. The
	// counters come at the start of the reconcile and the status at its end: a scrape between the two finds no
	// condition yet, so the wait is for both.
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	var families map[string]*dto.MetricFamily
	for {
		families, err = scrape(url)
		if err == nil && servesCluster(families["gnmic_cluster_target_moves_total"], namespace, "edge") &&
			servesCluster(families["gnmic_cluster_pods"], namespace, "edge") &&
			servesCluster(families["gnmic_cluster_condition"], namespace, "edge") {
			break
		}
		if ctx.Err() != nil {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("the operator never served the Cluster's metrics (last scrape error: %v)\n%s", err, tail(string(log), 30))
		}
		time.Sleep(500 * time.Millisecond)
	}

	for name, f := range families {
		known, ok := inv[name]
		if !ok {
			t.Errorf("the operator serves %s, which the inventory does not list", name)
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !known.labels[l.GetName()] {
					t.Errorf("the operator serves %s with label %q, which the inventory does not list", name, l.GetName())
				}
			}
		}
	}
	var perCluster []string
	for name, f := range inv {
		// Per-pod series (a pod label) need collector pods whose state is known; this Cluster has none.
		if !f.labels["namespace"] || !f.labels["cluster"] || f.labels["pod"] || !strings.HasPrefix(name, "gnmic_cluster_") {
			continue
		}
		perCluster = append(perCluster, name)
		if !servesCluster(families[name], namespace, "edge") {
			t.Errorf("the inventory lists %s per Cluster, but the operator serves no series of telemetry/edge", name)
		}
	}
	sort.Strings(perCluster)
	t.Logf("scraped %d families; per Cluster: %s", len(families), strings.Join(perCluster, ", "))
}

func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: %s", resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

func servesCluster(f *dto.MetricFamily, namespace, cluster string) bool {
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["namespace"] == namespace && labels["cluster"] == cluster {
			return true
		}
	}
	return false
}

func writeKubeconfig(t *testing.T, cfg *rest.Config, path string) {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
