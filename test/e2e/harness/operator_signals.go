package harness

import (
	"fmt"
	"syscall"
)

// SignalOperatorReplica sends sig to the container process of one operator pod and returns its PID: SIGSTOP
// freezes it as a paused VM or a debugger would (its pod stays, its probes go unanswered), SIGCONT resumes it.
func (cp *ControlPlane) SignalOperatorReplica(pod string, sig syscall.Signal) (int, error) {
	for _, r := range cp.OperatorReplicas() {
		if r.Pod != pod {
			continue
		}
		if r.PID == 0 {
			return 0, fmt.Errorf("the container of operator pod %s is not running", pod)
		}
		if err := syscall.Kill(r.PID, sig); err != nil {
			return 0, fmt.Errorf("signal %s to operator pod %s (pid %d): %w", sig, pod, r.PID, err)
		}
		cp.log("sent %s to the container of operator pod %s (pid %d)", sig, pod, r.PID)
		return r.PID, nil
	}
	return 0, fmt.Errorf("no operator pod %s", pod)
}
