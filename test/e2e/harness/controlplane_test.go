//go:build e2e

package harness

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestControlPlaneSchedulesPodsOntoFakeNodesWithLoopbackIPs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	started := time.Now()
	cp, err := Start(ctx, Options{Dir: t.TempDir(), Nodes: 1, PodCIDR: testPodCIDR(), Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	t.Logf("start to ready: %s", time.Since(started))

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "probe"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/none"}}},
	}
	if _, err := cp.Clientset.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	_, cidr, _ := net.ParseCIDR(testPodCIDR())
	var got *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = cp.Clientset.CoreV1().Pods("default").Get(ctx, "probe", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodRunning && got.Status.PodIP != "", nil
	})
	if err != nil {
		t.Fatalf("pod never ran: %v (last status %+v)", err, got.Status)
	}
	if !cidr.Contains(net.ParseIP(got.Status.PodIP)) {
		t.Errorf("pod IP %s is outside %s", got.Status.PodIP, testPodCIDR())
	}

	t.Run("a pod with a readiness gate is Ready only while its gate's condition is True", func(t *testing.T) {
		testReadinessGates(ctx, t, cp)
	})
}

// testReadinessGates checks the harness's kwok stages behave like a kubelet: containers become ready, the
// pod's Ready follows its readiness gate, in both directions.
func testReadinessGates(ctx context.Context, t *testing.T, cp *ControlPlane) {
	const gate = corev1.PodConditionType("example.com/gate")
	pods := cp.Clientset.CoreV1().Pods("default")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gated"},
		Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "c", Image: "example.invalid/none"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: gate}},
		},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	waitCondition := func(what string, want map[corev1.PodConditionType]corev1.ConditionStatus) {
		t.Helper()
		var got *corev1.Pod
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			if got, err = pods.Get(ctx, "gated", metav1.GetOptions{}); err != nil {
				return false, nil
			}
			for kind, status := range want {
				if conditionStatus(got, kind) != status {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("%s: %v (conditions %+v)", what, err, got.Status.Conditions)
		}
	}
	setGate := func(status corev1.ConditionStatus) {
		t.Helper()
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"lastTransitionTime":%q}]}}`,
			gate, status, time.Now().UTC().Format(time.RFC3339))
		if _, err := pods.Patch(ctx, "gated", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("set gate %s: %v", status, err)
		}
	}

	waitCondition("containers ready, gate unset", map[corev1.PodConditionType]corev1.ConditionStatus{
		corev1.ContainersReady: corev1.ConditionTrue, corev1.PodReady: corev1.ConditionFalse})
	// kwok must not have set the gate itself, and must keep it not ready for a while.
	time.Sleep(time.Second)
	waitCondition("still not ready without the gate", map[corev1.PodConditionType]corev1.ConditionStatus{
		corev1.PodReady: corev1.ConditionFalse, gate: ""})
	setGate(corev1.ConditionTrue)
	waitCondition("ready once the gate is True", map[corev1.PodConditionType]corev1.ConditionStatus{
		corev1.PodReady: corev1.ConditionTrue, gate: corev1.ConditionTrue})
	setGate(corev1.ConditionFalse)
	waitCondition("not ready once the gate is False", map[corev1.PodConditionType]corev1.ConditionStatus{
		corev1.PodReady: corev1.ConditionFalse, corev1.ContainersReady: corev1.ConditionTrue})
}

func conditionStatus(pod *corev1.Pod, kind corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == kind {
			return c.Status
		}
	}
	return ""
}
