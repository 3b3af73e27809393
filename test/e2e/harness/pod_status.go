package harness

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// reportStatus writes the container's state to the pod's status as a kubelet does: the container status
// (running, waiting, last termination, restart count, ready) and the Ready and ContainersReady conditions,
// which follow the readiness probe. kwok made the pod Running and Ready before any container ran; from then
// on only this status counts, and the endpoint slices follow it.
func (w *podWorker) reportStatus() {
	// One report at a time, each from the state at its start: the last one written is the latest state.
	w.reporting.Lock()
	defer w.reporting.Unlock()
	w.mu.Lock()
	pod := w.pod
	if w.gone || len(pod.Spec.Containers) == 0 {
		w.mu.Unlock()
		return
	}
	c := pod.Spec.Containers[0]
	started := w.running != nil
	status := corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: "emulated://" + c.Image,
		Ready: w.ready, RestartCount: int32(w.restarts), Started: &started,
	}
	if w.running != nil {
		status.ContainerID = containerID(w.running.proc.PID)
		status.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(w.running.started)}
	} else {
		status.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.waiting}
	}
	if w.lastTermination != nil {
		status.LastTerminationState.Terminated = w.lastTermination
	}
	ready := w.ready
	w.mu.Unlock()

	conditions := make([]corev1.PodCondition, 0, 2)
	for _, kind := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		cond := corev1.PodCondition{Type: kind, Status: corev1.ConditionFalse, Reason: "ContainersNotReady",
			LastTransitionTime: metav1.Now()}
		if ready {
			cond.Status, cond.Reason = corev1.ConditionTrue, ""
		}
		for _, existing := range pod.Status.Conditions {
			if existing.Type == kind && existing.Status == cond.Status {
				cond.LastTransitionTime = existing.LastTransitionTime
			}
		}
		conditions = append(conditions, cond)
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"conditions": conditions, "containerStatuses": []corev1.ContainerStatus{status},
	}})
	if err != nil {
		w.e.log("pod %s: encode status: %v", pod.Name, err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = w.e.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		w.e.log("pod %s: report status: %v", pod.Name, err)
	}
}

// setReady records a readiness probe's verdict on container c, if it still runs.
func (w *podWorker) setReady(c *runningContainer, ready bool) {
	w.mu.Lock()
	changed := w.running == c && w.ready != ready
	if changed {
		w.ready = ready
	}
	w.mu.Unlock()
	if changed {
		w.reportStatus()
	}
}

// markUnhealthy asks the worker to restart container c after its liveness probe failed.
func (w *podWorker) markUnhealthy(c *runningContainer) {
	w.mu.Lock()
	w.unhealthy = w.running == c
	w.mu.Unlock()
	w.wake()
}

// ReadyWithoutContainer: the pod is Ready but no container status names a container. A kubelet never reports
// that; kwok would, before the emulator's first report, were its stages not to leave the emulated pods alone.
func ReadyWithoutContainer(pod *corev1.Pod) bool {
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
