package harness

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// RunOperatorDeployment runs the pods of the operator's Deployment that OLM created in namespace through
// the pod emulator, as StartOperator does for the manifests it applies: it waits up to timeout for the
// Deployment, reads its selector and pod template from the cluster, and starts the emulator on the pods
// of its namespace that match the selector, with the operator binary as the image (opts.Binary; the
// other options do not apply, OLM decides the Deployment). The pods' containers run with the token of
// the ServiceAccount OLM created and the environment OLM's pod template gives, WATCH_NAMESPACE from the
// olm.targetNamespaces annotation included. An earlier operator's emulator is stopped first. It returns
// once the emulator runs; WaitForOperator waits for the replicas and the metrics APIs.
func (cp *ControlPlane) RunOperatorDeployment(ctx context.Context, namespace, name string, opts OperatorOptions, timeout time.Duration) error {
	binary, err := operatorBinary(opts.Binary)
	if err != nil {
		return err
	}
	if err := checkStatic(binary); err != nil {
		return err
	}
	var deployment *appsv1.Deployment
	err = cp.waitFor(ctx, "Deployment "+namespace+"/"+name, timeout, func(ctx context.Context) (bool, error) {
		d, err := cp.Clientset.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		deployment = d
		return true, nil
	})
	if err != nil {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(deployment.Spec.Selector)
	if err != nil {
		return fmt.Errorf("Deployment %s selector: %w", name, err)
	}
	api, err := url.Parse(cp.Config.Host)
	if err != nil {
		return fmt.Errorf("kube-apiserver address %s: %w", cp.Config.Host, err)
	}
	quiet := rest.CopyConfig(cp.Config)
	quiet.WarningHandler = rest.NoWarnings{}
	clientset, err := kubernetes.NewForConfig(quiet)
	if err != nil {
		return fmt.Errorf("clientset: %w", err)
	}
	if cp.operator != nil {
		cp.operator.emulator.stop()
		cp.operator = nil
	}
	dir := filepath.Join(cp.Dir, "operator-"+namespace)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	emulator, err := startPodEmulator(context.WithoutCancel(ctx), emulatorConfig{
		client: clientset, host: containerHost{client: clientset, apiHost: api.Hostname(), apiPort: api.Port()},
		image: OperatorImage(binary), namespace: namespace, selector: selector,
		dir: filepath.Join(dir, "pods"), logDir: filepath.Join(cp.Dir, "logs"), log: cp.log,
	})
	if err != nil {
		return err
	}
	replicas := 1
	if deployment.Spec.Replicas != nil {
		replicas = int(*deployment.Spec.Replicas)
	}
	cp.operator = &operatorRun{install: &operatorInstall{deployment: deployment}, emulator: emulator, replicas: replicas}
	cp.log("pod emulator runs the pods of Deployment %s/%s (%s)", namespace, name, selector)
	return nil
}

// WaitForOperator waits until as many operator pods as the Deployment asks for run a ready container and
// kube-apiserver reports the custom and external metrics APIServices available.
func (cp *ControlPlane) WaitForOperator(ctx context.Context) error {
	if cp.operator == nil {
		return fmt.Errorf("the operator is not running")
	}
	if err := cp.waitForOperatorReplicas(ctx); err != nil {
		return err
	}
	return cp.waitForMetricsAPIs(ctx)
}

// StopOperatorEmulator stops the pod emulator (every container it runs ends, SIGTERM then SIGKILL after
// 10 s), for example once OLM removed the operator.
func (cp *ControlPlane) StopOperatorEmulator() {
	if cp.operator != nil {
		cp.operator.emulator.stop()
		cp.operator = nil
	}
}

// ProcessArgv is the command line of a process (a replica's container: its sandbox executes the binary).
func ProcessArgv(pid int) ([]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"), nil
}

// ProcessEnv is the environment of a process, by name.
func ProcessEnv(pid int) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(data), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env, nil
}
