package harness

import (
	"context"
	"debug/elf"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// OperatorNamespace is where the operator is installed: config/default's namespace, and the one the
	// bundle is installed into.
	OperatorNamespace = "gnmic-operator-system"
	// MetricsAPIService is the Service the operator's APIServices point at.
	MetricsAPIService = "gnmic-operator-metrics-api"
	// OperatorLeaseName is the operator's leader election Lease in OperatorNamespace (the default of
	// --leader-election-id).
	OperatorLeaseName = "gnmic-operator.operator.gnmic.dev"
)

// OperatorOptions configure how the operator is installed.
type OperatorOptions struct {
	// Binary is the operator executable, the /manager of the emulated image, statically linked as the
	// Dockerfile builds it. Empty: $E2E_OPERATOR_BINARY, else bin/manager of the repository, built like the
	// Dockerfile does when missing. A relative path that does not exist from the working directory is taken
	// from the repository root.
	Binary string
	// Manifests is the install applied: ConfigDefault (the default) or BundleCSV.
	Manifests OperatorManifests
	// CollectorPollInterval is added to the operator's arguments as --collector-poll-interval, the way a
	// user's kustomize overlay would (default 10s; a negative value leaves the manifests' arguments as
	// they are).
	CollectorPollInterval time.Duration
	// Args are added to the operator container's arguments, the way a kustomize overlay would (for example
	// --sharding).
	Args []string
	// Replicas, when positive, replaces the Deployment's replica count.
	Replicas int32
}

// operatorRun is the installed operator and the emulator running its pods.
type operatorRun struct {
	install  *operatorInstall
	emulator *podEmulator
	replicas int
	// scraper is the token Prometheus would scrape the operator's metrics with (OperatorMetrics).
	scraper string
}

// Install applies the CRDs of config/crd/bases and waits until they are served. The rest of the
// operator's install comes with StartOperator.
func (cp *ControlPlane) Install(ctx context.Context) error {
	path := filepath.Join(RepoRoot(), "config", "crd", "bases")
	if out, err := cp.Kubectl(ctx, "apply", "--server-side", "-f", path); err != nil {
		return fmt.Errorf("kubectl apply %s: %w: %s", path, err, out)
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

// StartOperator installs the operator as a user does, from config/default or the bundle's CSV (plus the
// --collector-poll-interval overlay), and runs its Deployment's pods through the pod emulator: each pod's
// container is the operator binary in a sandbox built from the pod spec, with the pod's ServiceAccount
// token as its only credential. It returns once every replica the Deployment asks for is Ready and
// kube-apiserver reports the custom and external metrics APIServices available.
func (cp *ControlPlane) StartOperator(ctx context.Context, opts OperatorOptions) error {
	binary, err := operatorBinary(opts.Binary)
	if err != nil {
		return err
	}
	if err := checkStatic(binary); err != nil {
		return err
	}
	install, err := loadOperatorInstall(opts.Manifests)
	if err != nil {
		return err
	}
	if opts.CollectorPollInterval == 0 {
		opts.CollectorPollInterval = 10 * time.Second
	}
	if opts.CollectorPollInterval > 0 {
		if err := install.addArgs("--collector-poll-interval=" + opts.CollectorPollInterval.String()); err != nil {
			return err
		}
	}
	if len(opts.Args) > 0 {
		if err := install.addArgs(opts.Args...); err != nil {
			return err
		}
	}
	if opts.Replicas > 0 {
		if err := install.setReplicas(opts.Replicas); err != nil {
			return err
		}
	}
	manifests, err := install.yaml()
	if err != nil {
		return err
	}
	dir := filepath.Join(cp.Dir, "operator")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, "install.yaml")
	if err := os.WriteFile(path, manifests, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if out, err := cp.Kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", path); err != nil {
		return fmt.Errorf("kubectl apply %s: %w: %s", path, err, out)
	}
	cp.log("applied the operator's install from %s (%d objects)", opts.Manifests, len(install.objects))

	deployment := install.deployment
	selector, err := metav1.LabelSelectorAsSelector(deployment.Spec.Selector)
	if err != nil {
		return fmt.Errorf("Deployment %s selector: %w", deployment.Name, err)
	}
	api, err := url.Parse(cp.Config.Host)
	if err != nil {
		return fmt.Errorf("kube-apiserver address %s: %w", cp.Config.Host, err)
	}
	// The emulator's endpoint slices are of the deprecated FQDN type (endpoints.go): kube-apiserver's
	// warning about it on every write is expected.
	quiet := rest.CopyConfig(cp.Config)
	quiet.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(quiet)
	if err != nil {
		return fmt.Errorf("clientset: %w", err)
	}
	emulator, err := startPodEmulator(context.WithoutCancel(ctx), emulatorConfig{
		client: client, host: containerHost{client: client, apiHost: api.Hostname(), apiPort: api.Port()},
		image: OperatorImage(binary), namespace: deployment.Namespace, selector: selector,
		dir: filepath.Join(dir, "pods"), logDir: filepath.Join(cp.Dir, "logs"), log: cp.log,
	})
	if err != nil {
		return err
	}
	replicas := 1
	if deployment.Spec.Replicas != nil {
		replicas = int(*deployment.Spec.Replicas)
	}
	cp.operator = &operatorRun{install: install, emulator: emulator, replicas: replicas}
	if err := cp.waitForOperatorReplicas(ctx); err != nil {
		return err
	}
	return cp.waitForMetricsAPIs(ctx)
}

// waitForOperatorReplicas waits until as many operator pods as the Deployment asks for run a container
// that passed its readiness probe.
func (cp *ControlPlane) waitForOperatorReplicas(ctx context.Context) error {
	want := cp.operator.replicas
	// Sharded replicas started into a large fleet are ready once they hold their share, or a minute after
	// they joined (docs/sharding.md, "Rolling updates"): the 500-Cluster benchmark starts them that way.
	return cp.waitFor(ctx, fmt.Sprintf("%d ready operator replica(s)", want), 5*time.Minute, func(context.Context) (bool, error) {
		ready := 0
		for _, r := range cp.operator.emulator.replicas() {
			if r.Ready && r.PID != 0 {
				ready++
			}
		}
		return ready >= want, nil
	})
}

func (cp *ControlPlane) waitForMetricsAPIs(ctx context.Context) error {
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

// StopOperator ends the container of every operator replica: with kill, by SIGKILL in the middle of
// whatever it is doing; otherwise by SIGTERM and the pod's grace period, as a rolling update would. The
// pods stay and their containers stay stopped until RestartOperator (a kubelet would restart them).
func (cp *ControlPlane) StopOperator(kill bool) error {
	if cp.operator == nil {
		return fmt.Errorf("the operator is not running")
	}
	if err := cp.operator.emulator.hold(context.Background(), kill); err != nil {
		return err
	}
	cp.log("stopped every operator container (kill=%t)", kill)
	return nil
}

// RestartOperator starts the containers StopOperator stopped and waits until every replica is Ready.
func (cp *ControlPlane) RestartOperator(ctx context.Context) error {
	if cp.operator == nil || !cp.operator.emulator.isHeld() {
		return fmt.Errorf("the operator was never started or is still running")
	}
	cp.operator.emulator.release()
	return cp.waitForOperatorReplicas(ctx)
}

// OperatorArgsFromEnv is E2E_OPERATOR_ARGS split on spaces: flags a run adds to the operator's (a paired
// benchmark's --kube-api-qps, say).
func OperatorArgsFromEnv() []string { return strings.Fields(os.Getenv("E2E_OPERATOR_ARGS")) }

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
		return filepath.Abs(binary)
	}
	binary = filepath.Join(RepoRoot(), "bin", "manager")
	if _, err := os.Stat(binary); err == nil {
		return binary, nil
	}
	// As the Dockerfile builds it: the image has no C library.
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", binary, ".")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build the operator: %w: %s", err, out)
	}
	return binary, nil
}

// checkStatic refuses a binary that needs a dynamic loader: the operator's image (distroless/static) has
// none, so such a binary cannot start in the sandbox either.
func checkStatic(binary string) error {
	f, err := elf.Open(binary)
	if err != nil {
		return fmt.Errorf("operator binary %s: %w", binary, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("operator binary %s is dynamically linked; the image it runs as has no C library: "+
				"build it as the Dockerfile does, CGO_ENABLED=0 (make e2e-binaries)", binary)
		}
	}
	return nil
}
