package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// containerFinalizer keeps an emulated pod's object until its container stopped. kwok confirms a deletion
// at once (grace period 0) where a kubelet waits for the containers; without it the object, and with it the
// token bound to the pod, would be gone while the process still shuts down.
const containerFinalizer = "harness.gnmic.dev/container-running"

// podWorker runs the container of one pod, as a kubelet's pod worker does: it sets the volumes up once,
// starts the container when the pod is Running with an IP, restarts it whenever it exits (restartPolicy
// Always, with the kubelet's back-off), probes it, reports its status on the pod, and stops it when the pod
// is deleted: SIGTERM, then SIGKILL after terminationGracePeriodSeconds.
type podWorker struct {
	e    *podEmulator
	uid  types.UID
	poke chan struct{}

	// reporting serializes status reports.
	reporting sync.Mutex

	mu  sync.Mutex
	pod *corev1.Pod
	// gone: the pod object was removed.
	gone bool
	// held: the harness stopped the operator (StopOperator); nothing starts until released. holdKill
	// stops by SIGKILL.
	held, holdKill bool
	// kill asks for one SIGKILL of the running container (KillOperatorReplica).
	kill bool
	// unhealthy: the liveness probe failed; the container is restarted.
	unhealthy bool

	running  *runningContainer
	ready    bool
	restarts int
	// lastTermination is how the previous container ended; waiting why none runs now.
	lastTermination *corev1.ContainerStateTerminated
	waiting         string
}

type runningContainer struct {
	proc       *process
	started    time.Time
	stopProbes context.CancelFunc
}

func newPodWorker(e *podEmulator, pod *corev1.Pod) *podWorker {
	return &podWorker{e: e, uid: pod.UID, pod: pod, poke: make(chan struct{}, 1), waiting: "ContainerCreating"}
}

// update records the pod's latest state, or its removal with pod nil.
func (w *podWorker) update(pod *corev1.Pod) {
	w.mu.Lock()
	if pod == nil {
		w.gone = true
	} else {
		w.pod = pod
	}
	w.mu.Unlock()
	w.wake()
}

func (w *podWorker) wake() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// run is the worker's loop; it returns once the pod is gone and its container stopped, or the emulator stops.
func (w *podWorker) run(ctx context.Context) {
	defer w.e.wg.Done()
	var (
		vols      *podVolumes
		backoff   restartBackoff
		restartAt time.Time
	)
	// The volumes, and the refresh of their tokens, last as long as the pod.
	volCtx, stopVols := context.WithCancel(ctx)
	defer stopVols()
	for {
		w.mu.Lock()
		pod, gone, held, holdKill, kill, unhealthy, running := w.pod, w.gone, w.held, w.holdKill, w.kill, w.unhealthy, w.running
		w.kill, w.unhealthy = false, false
		w.mu.Unlock()
		grace := terminationGrace(pod)

		switch {
		case ctx.Err() != nil:
			w.stop(10*time.Second, false)
			return
		case gone || pod.DeletionTimestamp != nil:
			w.stop(grace, false)
			w.removeFinalizer()
			return
		case running != nil && held:
			if holdKill {
				grace = 0
			}
			w.stop(grace, false)
			restartAt = time.Time{}
			continue
		case running != nil && kill:
			w.stop(0, true)
			restartAt = time.Now().Add(backoff.after(time.Since(running.started)))
			continue
		case running != nil && unhealthy:
			w.e.log("pod %s: liveness probe failed, restarting its container", pod.Name)
			w.stop(grace, true)
			restartAt = time.Now().Add(backoff.after(time.Since(running.started)))
			continue
		case running == nil && !held && podStarted(pod) && !time.Now().Before(restartAt):
			if vols == nil {
				var err error
				if vols, err = w.prepare(ctx, pod); err != nil {
					w.e.log("pod %s: %v (retrying)", pod.Name, err)
					vols, restartAt = nil, time.Now().Add(time.Second)
					break
				}
				go vols.refreshTokens(volCtx, w.e.log)
			}
			if err := w.start(ctx, pod, vols); err != nil {
				w.e.log("pod %s: start container: %v", pod.Name, err)
				restartAt = time.Now().Add(backoff.after(0))
			}
		}

		var exited <-chan struct{}
		w.mu.Lock()
		if w.running != nil {
			exited = w.running.proc.done
		}
		w.mu.Unlock()
		var timer <-chan time.Time
		if exited == nil && restartAt.After(time.Now()) {
			timer = time.After(time.Until(restartAt))
		}
		select {
		case <-w.poke:
		case <-timer:
		case <-ctx.Done():
		case <-exited:
			ran := w.exited(true)
			restartAt = time.Now().Add(backoff.after(ran))
			w.e.log("pod %s: container exited after %s; restart in %s", pod.Name, ran.Round(time.Second), time.Until(restartAt).Round(time.Second))
		}
	}
}

// prepare adds the finalizer and sets up the pod's volumes.
func (w *podWorker) prepare(ctx context.Context, pod *corev1.Pod) (*podVolumes, error) {
	if len(pod.Spec.Containers) != 1 || len(pod.Spec.InitContainers) != 0 {
		return nil, fmt.Errorf("the pod emulator runs pods of exactly one container and no init containers")
	}
	patch := fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, containerFinalizer)
	if _, err := w.e.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return nil, fmt.Errorf("add finalizer: %w", err)
	}
	return setUpVolumes(ctx, w.e.client, pod, filepath.Join(w.e.podDir(pod), "volumes"))
}

// start runs the pod's container in a new sandbox.
func (w *podWorker) start(ctx context.Context, pod *corev1.Pod, vols *podVolumes) error {
	c := &pod.Spec.Containers[0]
	dir := filepath.Join(w.e.podDir(pod), "containers", c.Name)
	spec, err := w.e.host.sandboxFor(ctx, pod, c, w.e.image, vols, dir)
	if err != nil {
		return err
	}
	encoded, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("encode sandbox: %w", err)
	}
	cmd := exec.Command(w.e.self)
	cmd.Env = []string{sandboxEnv + "=" + string(encoded)}
	// Pdeathsig: an aborted test must not leave an operator holding its pod IP's ports (a kubelet's
	// containers outlive it; here the "node" is the program running the emulator).
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS, Setpgid: true, Pdeathsig: syscall.SIGKILL,
	}
	proc, err := runLogged(filepath.Join(w.e.logDir, pod.Name+".log"), pod.Name, cmd)
	if err != nil {
		return err
	}
	probeCtx, stopProbes := context.WithCancel(ctx)
	w.mu.Lock()
	if w.lastTermination != nil {
		w.restarts++
	}
	running := &runningContainer{proc: proc, started: time.Now(), stopProbes: stopProbes}
	w.running = running
	w.ready, w.waiting = false, ""
	w.mu.Unlock()
	w.e.log("pod %s: started its container (pid %d): %v", pod.Name, proc.PID, spec.Argv)
	w.reportStatus()
	go w.probe(probeCtx, pod, c, running)
	return nil
}

// stop ends the running container: SIGTERM, SIGKILL after grace (at once for grace 0), and waits for it.
// crashed reports the end as a failure the kubelet restarts after its back-off.
func (w *podWorker) stop(grace time.Duration, crashed bool) {
	w.mu.Lock()
	running := w.running
	w.mu.Unlock()
	if running == nil {
		return
	}
	var err error
	if grace == 0 {
		err = running.proc.kill()
	} else {
		err = running.proc.stop(grace)
	}
	if err != nil {
		w.e.log("%v", err)
	}
	w.exited(crashed)
}

// exited records the end of the running container and reports it; it returns how long it ran.
func (w *podWorker) exited(crashed bool) time.Duration {
	w.mu.Lock()
	running := w.running
	if running == nil {
		w.mu.Unlock()
		return 0
	}
	running.stopProbes()
	<-running.proc.done
	code, reason := exitStatus(running.proc.err)
	w.lastTermination = &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, StartedAt: metav1.NewTime(running.started), FinishedAt: metav1.Now(),
		ContainerID: containerID(running.proc.PID),
	}
	w.running, w.ready = nil, false
	w.waiting = "ContainerCreating"
	if crashed || w.gone {
		w.waiting = "CrashLoopBackOff"
	}
	w.mu.Unlock()
	w.reportStatus()
	return time.Since(running.started)
}

// removeFinalizer lets the deleted pod's object go.
func (w *podWorker) removeFinalizer() {
	w.mu.Lock()
	pod := w.pod
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	patch := fmt.Sprintf(`{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, containerFinalizer)
	_, err := w.e.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.e.log("pod %s: remove finalizer: %v", pod.Name, err)
	}
}

// podStarted: kwok made the pod Running with an IP, which a kubelet's sandbox has before any container.
func podStarted(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && pod.Status.PodIP != ""
}

func terminationGrace(pod *corev1.Pod) time.Duration {
	if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return 30 * time.Second
}

func containerID(pid int) string { return fmt.Sprintf("emulated://%d", pid) }

// exitStatus is the exit code and the reason a container runtime gives for a process's end.
func exitStatus(err error) (int32, string) {
	if err == nil {
		return 0, "Completed"
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			return 128 + int32(status.Signal()), "Error"
		}
		return int32(exit.ExitCode()), "Error"
	}
	return -1, "Error"
}

// restartBackoff is the kubelet's crash loop back-off: a container that exits is restarted at once the
// first time, then after 10 s, 20 s, … up to 5 minutes; a container that ran 10 minutes starts afresh.
type restartBackoff struct{ next time.Duration }

func (b *restartBackoff) after(ran time.Duration) time.Duration {
	if ran >= 10*time.Minute {
		b.next = 0
	}
	delay := b.next
	b.next = min(max(2*b.next, 10*time.Second), 5*time.Minute)
	return delay
}

// podDir is where a pod's volumes and containers live on the host.
func (e *podEmulator) podDir(pod *corev1.Pod) string {
	return filepath.Join(e.dir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}
