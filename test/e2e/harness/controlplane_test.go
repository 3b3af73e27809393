//go:build e2e

package harness

import (
	"context"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestControlPlaneSchedulesPodsOntoFakeNodesWithLoopbackIPs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	started := time.Now()
	cp, err := Start(ctx, Options{Dir: t.TempDir(), Nodes: 1, Log: t.Logf})
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
	_, cidr, _ := net.ParseCIDR(PodCIDR)
	var got *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = cp.Clientset.CoreV1().Pods("default").Get(ctx, "probe", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodRunning && got.Status.PodIP != "", nil
	})
	if err != nil {
		t.Fatalf("pod never ran: %v (last status %+v)", err, got.Status)
	}
	if !cidr.Contains(net.ParseIP(got.Status.PodIP)) {
		t.Errorf("pod IP %s is outside %s", got.Status.PodIP, PodCIDR)
	}
}
