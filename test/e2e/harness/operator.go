package harness

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
)

const (
	// OperatorNamespace holds the metrics API's Service and certificate Secret.
	OperatorNamespace = "gnmic-operator-system"
	// MetricsAPIService is the Service the operator's APIServices point at.
	MetricsAPIService = "gnmic-operator-metrics-api"
)

// OperatorOptions configure the operator process.
type OperatorOptions struct {
	// Binary is the operator executable. Empty: $E2E_OPERATOR_BINARY, else bin/manager of the repository,
	// built with `go build` when missing. A relative path that does not exist from the working directory
	// is taken from the repository root.
	Binary string
	// CollectorPollInterval is --collector-poll-interval (default 10s).
	CollectorPollInterval time.Duration
}

// Install applies the CRDs of config/crd/bases and the RBAC that lets the autoscaler read the metrics APIs,
// then waits until the CRDs are served.
func (cp *ControlPlane) Install(ctx context.Context) error {
	root := RepoRoot()
	for _, path := range []string{
		filepath.Join(root, "config", "crd", "bases"),
		filepath.Join(root, "config", "rbac", "metrics_adapter_hpa_reader_role.yaml"),
		filepath.Join(root, "config", "rbac", "metrics_adapter_hpa_reader_role_binding.yaml"),
	} {
		if out, err := cp.Kubectl(ctx, "apply", "--server-side", "-f", path); err != nil {
			return fmt.Errorf("kubectl apply %s: %w: %s", path, err, out)
		}
	}
	if out, err := cp.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"); err != nil {
		return fmt.Errorf("wait for CRDs: %w: %s", err, out)
	}
	return nil
}

// Kubectl runs the control plane's kubectl against the admin kubeconfig and returns its combined output.
func (cp *ControlPlane) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(cp.BinDir, "kubectl"), append([]string{"--kubeconfig=" + cp.Kubeconfig}, args...)...)
	return cmd.CombinedOutput()
}

// StartOperator runs the operator binary against the admin kubeconfig, with its metrics API on a local
// port that the APIServices reach through a Service whose FQDN EndpointSlice names 127.0.0.1 (validation
// refuses loopback IP endpoints; aggregator routing dials the FQDN). It returns once kube-apiserver
// reports the custom and external metrics APIServices available.
func (cp *ControlPlane) StartOperator(ctx context.Context, opts OperatorOptions) error {
	binary, err := operatorBinary(opts.Binary)
	if err != nil {
		return err
	}
	if opts.CollectorPollInterval == 0 {
		opts.CollectorPollInterval = 10 * time.Second
	}
	ports, err := FreePorts(2)
	if err != nil {
		return err
	}
	apiPort, probePort := ports[0], ports[1]
	if err := cp.exposeMetricsAPI(ctx, apiPort); err != nil {
		return err
	}
	cp.operator = &operatorCommand{binary: binary, probePort: probePort, args: []string{
		"--leader-elect=false",
		"--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort),
		"--collector-poll-interval=" + opts.CollectorPollInterval.String(),
		"--metrics-api-bind-address=127.0.0.1",
		"--metrics-api-port=" + strconv.Itoa(apiPort),
		"--metrics-api-service-name=" + MetricsAPIService,
		"--metrics-api-service-namespace=" + OperatorNamespace,
		"--metrics-api-service-port=443",
		"--metrics-api-cert-dir=" + filepath.Join(cp.Dir, "operator-certs"),
		"--metrics-api-auth-kubeconfig=" + cp.Kubeconfig,
		"--metrics-api-resync-period=5s",
	}, env: []string{"KUBECONFIG=" + cp.Kubeconfig, "POD_NAMESPACE=" + OperatorNamespace}}
	if err := cp.runOperator(); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	apiServices := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	for _, name := range []string{"v1beta1.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io"} {
		err := cp.waitFor(ctx, "APIService "+name+" available", 90*time.Second, func(ctx context.Context) (bool, error) {
			u, err := dyn.Resource(apiServices).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conditions {
				if m, ok := c.(map[string]any); ok && m["type"] == "Available" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// operatorCommand is how the operator was started, so that it can be started again the same way.
type operatorCommand struct {
	binary    string
	args, env []string
	probePort int
	process   *process
}

func (cp *ControlPlane) runOperator() error {
	op := cp.operator
	p, err := startProcess(filepath.Join(cp.Dir, "logs"), "operator", op.binary, op.args, op.env)
	if err != nil {
		return err
	}
	op.process = p
	cp.procs = append(cp.procs, p)
	cp.log("started operator %s (pid %d)", op.binary, p.PID)
	return nil
}

// StopOperator ends the operator process: with kill, by SIGKILL in the middle of whatever it is doing;
// otherwise by SIGTERM, as a rolling update of its Deployment would.
func (cp *ControlPlane) StopOperator(kill bool) error {
	op := cp.operator
	if op == nil || op.process == nil {
		return fmt.Errorf("the operator is not running")
	}
	stop := func() error { return op.process.stop(10 * time.Second) }
	if kill {
		stop = op.process.kill
	}
	if err := stop(); err != nil {
		return err
	}
	for i, p := range cp.procs {
		if p == op.process {
			cp.procs = append(cp.procs[:i], cp.procs[i+1:]...)
			break
		}
	}
	cp.log("stopped operator (pid %d, kill=%t)", op.process.PID, kill)
	op.process = nil
	return nil
}

// RestartOperator starts the operator again with the arguments of StartOperator and waits until its
// readiness probe answers.
func (cp *ControlPlane) RestartOperator(ctx context.Context) error {
	if cp.operator == nil || cp.operator.process != nil {
		return fmt.Errorf("the operator was never started or is still running")
	}
	if err := cp.runOperator(); err != nil {
		return err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(cp.operator.probePort) + "/readyz"
	return cp.waitFor(ctx, "operator readiness", 60*time.Second, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func operatorBinary(binary string) (string, error) {
	if binary == "" {
		binary = os.Getenv("E2E_OPERATOR_BINARY")
	}
	if binary != "" {
		if _, err := os.Stat(binary); err != nil && !filepath.IsAbs(binary) {
			// go test runs in the package directory: a relative path is meant from the repository root.
			binary = filepath.Join(RepoRoot(), binary)
		}
		if _, err := os.Stat(binary); err != nil {
			return "", fmt.Errorf("operator binary: %w", err)
		}
		return binary, nil
	}
	binary = filepath.Join(RepoRoot(), "bin", "manager")
	if _, err := os.Stat(binary); err == nil {
		return binary, nil
	}
	cmd := exec.Command("go", "build", "-o", binary, ".")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build the operator: %w: %s", err, out)
	}
	return binary, nil
}

func (cp *ControlPlane) exposeMetricsAPI(ctx context.Context, port int) error {
	core := cp.Clientset.CoreV1()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorNamespace}}
	if _, err := core.Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", OperatorNamespace, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: OperatorNamespace, Name: MetricsAPIService},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(port)), Protocol: corev1.ProtocolTCP,
		}}},
	}
	if _, err := core.Services(OperatorNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Service %s: %w", MetricsAPIService, err)
	}
	portName, portNumber, protocol := "https", int32(port), corev1.ProtocolTCP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: OperatorNamespace, Name: MetricsAPIService + "-local",
			Labels: map[string]string{discoveryv1.LabelServiceName: MetricsAPIService},
		},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &portNumber, Protocol: &protocol}},
	}
	if _, err := cp.Clientset.DiscoveryV1().EndpointSlices(OperatorNamespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create EndpointSlice for %s: %w", MetricsAPIService, err)
	}
	return nil
}
