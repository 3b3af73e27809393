package harness

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeSpec describes a fake Node.
type NodeSpec struct {
	Name string
	// Labels are added to type=kwok and the hostname label.
	Labels map[string]string
	// Pods is how many pods fit on the Node (default 250).
	Pods int
}

// AddNodes creates fake Nodes that kwok manages and waits until they are Ready.
func (cp *ControlPlane) AddNodes(ctx context.Context, specs ...NodeSpec) error {
	for _, spec := range specs {
		labels := map[string]string{"type": "kwok", corev1.LabelHostname: spec.Name}
		for k, v := range spec.Labels {
			labels[k] = v
		}
		pods := spec.Pods
		if pods == 0 {
			pods = 250
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Annotations: map[string]string{KwokNodeAnnotation: "fake"}, Labels: labels},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
				corev1.ResourcePods: *resource.NewQuantity(int64(pods), resource.DecimalSI),
			}},
		}
		node.Status.Capacity = node.Status.Allocatable
		if _, err := cp.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", node.Name, err)
		}
	}
	return cp.waitFor(ctx, fmt.Sprintf("%d ready node(s)", len(specs)), 60*time.Second, func(ctx context.Context) (bool, error) {
		for _, spec := range specs {
			node, err := cp.Clientset.CoreV1().Nodes().Get(ctx, spec.Name, metav1.GetOptions{})
			if err != nil || !nodeReady(node) {
				return false, nil
			}
		}
		return true, nil
	})
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// DeleteNode deletes a Node object, as a cloud provider does when its machine is gone. The pods bound to it
// stay until kube-controller-manager's pod garbage collector removes them (after a 40 s quarantine);
// Collectors closes their fake collectors at once.
func (cp *ControlPlane) DeleteNode(ctx context.Context, name string) error {
	if err := cp.Clientset.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete node %s: %w", name, err)
	}
	return nil
}
