//go:build e2e

package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

var (
	apiServicesResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	clustersResource    = schema.GroupVersionResource{Group: "operator.gnmic.dev", Version: "v1alpha1", Resource: "clusters"}
	// metricsAPIServices are the APIServices the operator registers at run time.
	metricsAPIServices = []string{"v1beta1.custom.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io"}
)

// TestUndeployLeavesNothing installs the operator from config/default, lets it register its metrics
// APIServices, runs `make undeploy` and checks that nothing of the operator is left: no APIService (the
// garbage collector removes them with the install's ClusterRoleBindings that own them), ClusterRole,
// ClusterRoleBinding, admission policy or namespace, and that discovery works (`kubectl api-resources`).
func TestUndeployLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{Dir: testDir(t), Nodes: 1, PodCIDR: testPodCIDR(), Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	if err := cp.StartOperator(ctx, OperatorOptions{Manifests: ConfigDefault}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range metricsAPIServices {
		u, err := dyn.Resource(apiServicesResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("APIService %s: %v", name, err)
		}
		var owners []string
		for _, ref := range u.GetOwnerReferences() {
			owners = append(owners, ref.Kind+"/"+ref.Name)
		}
		t.Logf("APIService %s owned by %v", name, owners)
		if len(owners) == 0 {
			t.Errorf("APIService %s has no owner: nothing would remove it", name)
		}
	}

	started := time.Now()
	out, err := runMake(ctx, cp, "undeploy")
	if err != nil {
		t.Fatalf("make undeploy: %v\n%s", err, out)
	}
	t.Logf("make undeploy returned after %s", time.Since(started).Round(100*time.Millisecond))

	var left []string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		left = operatorLeftovers(ctx, t, cp, dyn)
		return len(left) == 0, nil
	})
	if err != nil {
		t.Fatalf("%s after make undeploy the operator left %v", time.Since(started).Round(time.Second), left)
	}
	t.Logf("nothing of the operator left %s after make undeploy began", time.Since(started).Round(100*time.Millisecond))
	if out, err := cp.Kubectl(ctx, "api-resources"); err != nil {
		t.Fatalf("kubectl api-resources after make undeploy: %v\n%s", err, out)
	}
}

// operatorLeftovers lists what of the operator's install is still there: its metrics APIServices, its
// cluster-scoped RBAC and admission policies, and its namespace.
func operatorLeftovers(ctx context.Context, t *testing.T, cp *ControlPlane, dyn dynamic.Interface) []string {
	t.Helper()
	var left []string
	for _, name := range metricsAPIServices {
		if _, err := dyn.Resource(apiServicesResource).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "APIService/"+name)
		}
	}
	for _, kind := range []string{"clusterroles", "clusterrolebindings", "validatingadmissionpolicies",
		"validatingadmissionpolicybindings", "mutatingwebhookconfigurations", "validatingwebhookconfigurations"} {
		out, err := cp.Kubectl(ctx, "get", kind, "-o", "name", "-l", "app.kubernetes.io/name=gnmic-operator")
		if err != nil {
			left = append(left, fmt.Sprintf("%s (kubectl get failed: %v: %s)", kind, err, out))
			continue
		}
		left = append(left, strings.Fields(string(out))...)
	}
	if _, err := cp.Clientset.CoreV1().Namespaces().Get(ctx, OperatorNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		left = append(left, "Namespace/"+OperatorNamespace)
	}
	return left
}

// TestMakeInstallRun runs what the README tells a developer on a fresh cluster: `make install` then
// `make run`. The operator must come up, reconcile a Cluster, and register no APIService (a process
// outside the cluster cannot serve one).
func TestMakeInstallRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{Dir: testDir(t), Nodes: 1, PodCIDR: testPodCIDR(), Log: t.Logf, WithoutCRDs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	if out, err := runMake(ctx, cp, "install"); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}

	logPath := filepath.Join(cp.Dir, "logs", "make-run.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	run := makeCommand(context.WithoutCancel(ctx), cp, "run")
	run.Stdout, run.Stderr = logFile, logFile
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed when make run has ended, with its error in runErr: every reader sees it, so the
	// cleanup below never waits for a value an earlier check took.
	var runErr error
	exited := make(chan struct{})
	go func() { runErr = run.Wait(); close(exited) }()
	defer func() {
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()

	if out, err := cp.Kubectl(ctx, "create", "namespace", "make-run"); err != nil {
		t.Fatalf("create namespace: %v: %s", err, out)
	}
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.gnmic.dev/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "telemetry", "namespace": "make-run"},
		"spec":     map[string]any{"image": gnmic.DefaultImage, "replicas": int64(1)},
	}}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(clustersResource).Namespace("make-run").Create(ctx, cluster, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	err = wait.PollUntilContextTimeout(ctx, time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("make run exited: %v", runErr)
		default:
		}
		_, err := cp.Clientset.AppsV1().StatefulSets("make-run").Get(ctx, "telemetry", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("the operator of make run did not reconcile the Cluster: %v\n%s", err, tail(log, 40))
	}
	t.Logf("make run reconciled a Cluster %s after it was created", time.Since(started).Round(100*time.Millisecond))

	for _, name := range metricsAPIServices {
		if _, err := dyn.Resource(apiServicesResource).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("make run registered APIService %s (err %v): the aggregation layer cannot reach a local process", name, err)
		}
	}
	if out, err := cp.Kubectl(ctx, "api-resources"); err != nil {
		t.Errorf("kubectl api-resources while make run runs: %v\n%s", err, out)
	}
	select {
	case <-exited:
		log, _ := os.ReadFile(logPath)
		t.Fatalf("make run exited: %v\n%s", runErr, tail(log, 40))
	default:
	}
}

// makeCommand is `make target` in the repository, with the control plane's kubectl and kubeconfig.
func makeCommand(ctx context.Context, cp *ControlPlane, target string) *exec.Cmd {
	kubectl := filepath.Join(cp.BinDir, "kubectl") + " --kubeconfig=" + cp.Kubeconfig
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", target, "KUBECTL="+kubectl)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig, "GOTOOLCHAIN=local")
	return cmd
}

func runMake(ctx context.Context, cp *ControlPlane, target string) ([]byte, error) {
	var out bytes.Buffer
	cmd := makeCommand(ctx, cp, target)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.Bytes(), fmt.Errorf("exit status %d", exit.ExitCode())
	}
	return out.Bytes(), err
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
