package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
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
	if err := startReadinessGuard(emulator.ctx, clientset, namespace, selector, cp.log); err != nil {
		emulator.stop()
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

// startReadinessGuard keeps the emulated pods of namespace that match selector from being Ready before their
// container ran, until ctx ends. kwok's pod-ready stage marks a pod Running and Ready as it starts it; the
// emulator's first status report, when it starts the container a few hundred milliseconds later, sets Ready
// back to False until the readiness probe passes. A kubelet never reports a pod Ready before its probe. In
// that window the ReplicaSet controller counts the pod available, so a Deployment's rolling update (OLM's
// upgrade) deletes an old pod before its replacement is ready, OLM sees the Deployment available (a CSV
// goes Succeeded, then Failed when the emulator reports the truth), and the aggregation layer may send a
// metrics request to a pod with no process. The guard answers kwok's status at once, as a kubelet would
// have reported it: Ready and ContainersReady False while no container was reported. It writes only over
// kwok's status (a resourceVersion precondition; once the emulator reported a container it never acts)
// and never sets anything Ready, so the window shrinks from the emulator's start-up time to one watch event.
func startReadinessGuard(ctx context.Context, clientset kubernetes.Interface, namespace string, selector labels.Selector, log func(string, ...any)) error {
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
	pods := factory.Core().V1().Pods().Informer()
	guard := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !readyWithoutContainer(pod) {
			return
		}
		now := metav1.Now()
		conditions := []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now},
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": pod.ResourceVersion},
			"status":   map[string]any{"conditions": conditions},
		})
		if err != nil {
			return
		}
		_, err = clientset.CoreV1().Pods(namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		switch {
		case err == nil:
			log("pod %s: kwok marked it Ready before its container ran; reported not ready, as a kubelet would", pod.Name)
		case !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil:
			log("pod %s: report not ready: %v", pod.Name, err)
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    guard,
		UpdateFunc: func(_, obj any) { guard(obj) },
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		return fmt.Errorf("readiness guard informer did not sync")
	}
	return nil
}

// readyWithoutContainer: the pod is Ready but no container status names a container (kwok's status; the
// emulator reports its containers with an ID).
func readyWithoutContainer(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || !podIsReady(pod) {
		return false
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.ContainerID != "" {
			return false
		}
	}
	return true
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
