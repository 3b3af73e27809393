//go:build e2e

package harness

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// checkRollout restarts the operator's Deployment and watches its pods through the rollout. The manifests
// ask for maxSurge 1 and maxUnavailable 0, so a kubelet's cluster replaces the replicas one at a time: no pod
// is Ready before its container ran and passed its readiness probe, and at every moment as many pods as the
// Deployment asks for run a ready container and are not being deleted. Every pod event is checked (a watch
// misses none), so a Ready that lasted one write is caught. Throughout, the metrics API is asked through
// kube-apiserver every 50 ms, and no request may fail: a new replica is Ready only once its metrics API
// serves, an old one keeps serving until its endpoint left the Service.
func checkRollout(ctx context.Context, t *testing.T, cp *ControlPlane) {
	t.Helper()
	deployment := cp.operator.install.deployment
	want := cp.operator.replicas
	selector, err := metav1.LabelSelectorAsSelector(deployment.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for _, r := range cp.OperatorReplicas() {
		before[r.Pod] = true
	}

	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	factory := informers.NewSharedInformerFactoryWithOptions(cp.Clientset, 0, informers.WithNamespace(deployment.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
	pods := factory.Core().V1().Pods().Informer()
	var (
		mu         sync.Mutex
		violations []string
		rolling    bool // the handler saw the pods as they were before the rollout
		started    = time.Now()
	)
	check := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !rolling {
			return
		}
		at := time.Since(started).Round(10 * time.Millisecond)
		if ReadyWithoutContainer(pod) {
			violations = append(violations, fmt.Sprintf("%s: pod %s Ready before its container ran", at, pod.Name))
		}
		serving := 0
		for _, o := range pods.GetStore().List() {
			if p := o.(*corev1.Pod); p.DeletionTimestamp == nil && runsReadyContainer(p) {
				serving++
			}
		}
		if serving < want {
			violations = append(violations, fmt.Sprintf("%s: after an event of pod %s only %d of %d pods run a ready container and are not being deleted", at, pod.Name, serving, want))
		}
	}
	handler, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    check,
		UpdateFunc: func(_, obj any) { check(obj) },
		DeleteFunc: check,
	})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(watchCtx.Done())
	// Once the handler got the listed pods, the store holds them all: from then on every event is checked
	// against the whole set.
	if !cache.WaitForCacheSync(watchCtx.Done(), handler.HasSynced) {
		t.Fatal("operator pods informer did not sync")
	}
	mu.Lock()
	rolling = true
	mu.Unlock()

	requests := cp.MonitorMetricsAPI(ctx, "", 50*time.Millisecond)
	defer requests.Stop()
	name := "deployment/" + deployment.Name
	if out, err := cp.Kubectl(ctx, "-n", deployment.Namespace, "rollout", "restart", name); err != nil {
		t.Fatalf("rollout restart: %v: %s", err, out)
	}
	if out, err := cp.Kubectl(ctx, "-n", deployment.Namespace, "rollout", "status", name, "--timeout=3m"); err != nil {
		t.Fatalf("rollout status: %v: %s", err, out)
	}
	// The rollout is over once the Deployment says so and the replicas are the new pods, each running: the
	// old pods' containers have stopped, their drain included.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		replicas := cp.OperatorReplicas()
		if len(replicas) != want {
			return false, nil
		}
		for _, r := range replicas {
			if before[r.Pod] || !r.Ready || r.PID == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("after the rollout: want %d new ready replicas, got %+v", want, cp.OperatorReplicas())
	}
	metrics := requests.Stop()
	t.Logf("rolled %d replicas in %s; metrics API through kube-apiserver: %d requests, %d failed",
		want, time.Since(started).Round(100*time.Millisecond), metrics.Requests, metrics.Failures)
	if metrics.Failures > 0 {
		t.Errorf("%d of %d metrics API requests failed during the rollout: %v", metrics.Failures, metrics.Requests, metrics.FailureLog)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	for _, v := range violations {
		t.Error(v)
	}
}

// runsReadyContainer: the pod's Ready condition is True and its container status names a running, ready
// container (the emulator's report; kwok's names none).
func runsReadyContainer(pod *corev1.Pod) bool {
	if !podIsReady(pod) {
		return false
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.ContainerID != "" && c.Ready && c.State.Running != nil {
			return true
		}
	}
	return false
}
