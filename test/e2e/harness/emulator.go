package harness

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podEmulator plays the kubelet for the pods of one namespace that match a selector: kwok schedules them
// and makes them Running with a loopback IP, and the emulator runs each one's container as a local
// process the way a kubelet would (podWorker, sandboxFor), keeps their status, and publishes the endpoints
// of the Services that select them (endpointSlices). It acts with the admin credentials, as a kubelet acts
// with its node's; the processes it starts get only their pod's ServiceAccount token.
type podEmulator struct {
	client    kubernetes.Interface
	host      containerHost
	image     Image
	namespace string
	selector  labels.Selector
	// dir holds each pod's volumes and container roots; logDir one log per pod.
	dir, logDir string
	// self is the binary the sandboxes start from (this program: its init enters the sandbox).
	self string
	log  func(format string, args ...any)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	workers  map[types.UID]*podWorker
	held     bool
	holdKill bool
}

type emulatorConfig struct {
	client      kubernetes.Interface
	host        containerHost
	image       Image
	namespace   string
	selector    labels.Selector
	dir, logDir string
	log         func(format string, args ...any)
}

func startPodEmulator(ctx context.Context, cfg emulatorConfig) (*podEmulator, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable for the container sandboxes: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	e := &podEmulator{
		client: cfg.client, host: cfg.host, image: cfg.image, namespace: cfg.namespace, selector: cfg.selector,
		dir: cfg.dir, logDir: cfg.logDir, self: self, log: cfg.log, ctx: ctx, cancel: cancel,
		workers: map[types.UID]*podWorker{},
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cfg.client, 0, informers.WithNamespace(cfg.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = cfg.selector.String() }))
	pods := factory.Core().V1().Pods().Informer()
	endpoints := newEndpointSlices(cfg.client, cfg.namespace, cfg.log)
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { e.observe(obj); endpoints.trigger() },
		UpdateFunc: func(_, obj any) { e.observe(obj); endpoints.trigger() },
		DeleteFunc: func(obj any) {
			if pod, ok := deletedObject(obj).(*corev1.Pod); ok {
				e.forget(pod)
			}
			endpoints.trigger()
		},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	// The services informer is not filtered by the pods' selector: the factory's tweak applies to every
	// informer it makes, so Services come from a factory of their own.
	serviceFactory := informers.NewSharedInformerFactoryWithOptions(cfg.client, 0, informers.WithNamespace(cfg.namespace))
	services := serviceFactory.Core().V1().Services().Informer()
	if _, err := services.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { endpoints.trigger() },
		UpdateFunc: func(any, any) { endpoints.trigger() },
		DeleteFunc: func(any) { endpoints.trigger() },
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("watch services: %w", err)
	}
	factory.Start(ctx.Done())
	serviceFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, services.HasSynced) {
		cancel()
		return nil, fmt.Errorf("pod emulator informers did not sync")
	}
	endpoints.pods, endpoints.services = pods.GetIndexer(), services.GetIndexer()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		endpoints.run(ctx)
	}()
	return e, nil
}

func (e *podEmulator) observe(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if w, ok := e.workers[pod.UID]; ok {
		w.update(pod)
		return
	}
	if pod.DeletionTimestamp != nil || e.ctx.Err() != nil {
		return
	}
	w := newPodWorker(e, pod)
	w.held, w.holdKill = e.held, e.holdKill
	e.workers[pod.UID] = w
	e.wg.Add(1)
	go func() {
		w.run(e.ctx)
		e.mu.Lock()
		delete(e.workers, w.uid)
		e.mu.Unlock()
	}()
}

func (e *podEmulator) forget(pod *corev1.Pod) {
	e.mu.Lock()
	w, ok := e.workers[pod.UID]
	e.mu.Unlock()
	if ok {
		w.update(nil)
	}
}

// stop ends every container (SIGTERM, SIGKILL after 10 s) and the emulator's watches.
func (e *podEmulator) stop() {
	// Under the lock: observe starts no worker once the context is done.
	e.mu.Lock()
	e.cancel()
	e.mu.Unlock()
	e.wg.Wait()
}

// hold stops every container, by SIGKILL or by SIGTERM and the pod's grace period, and starts none until
// release; it returns once none runs.
func (e *podEmulator) hold(ctx context.Context, kill bool) error {
	e.mu.Lock()
	e.held, e.holdKill = true, kill
	workers := e.workersLocked()
	e.mu.Unlock()
	for _, w := range workers {
		w.mu.Lock()
		w.held, w.holdKill = true, kill
		w.mu.Unlock()
		w.wake()
	}
	return e.waitUntil(ctx, "every operator container stopped", func() bool {
		for _, r := range e.replicas() {
			if r.PID != 0 {
				return false
			}
		}
		return true
	})
}

func (e *podEmulator) isHeld() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.held
}

// release lets the held containers start again.
func (e *podEmulator) release() {
	e.mu.Lock()
	e.held = false
	workers := e.workersLocked()
	e.mu.Unlock()
	for _, w := range workers {
		w.mu.Lock()
		w.held = false
		w.mu.Unlock()
		w.wake()
	}
}

// kill sends SIGKILL to the container of the named pod and returns once it ended; the worker restarts it
// as a kubelet would.
func (e *podEmulator) kill(ctx context.Context, pod string) (int, error) {
	e.mu.Lock()
	var target *podWorker
	for _, w := range e.workers {
		w.mu.Lock()
		if w.pod.Name == pod {
			target = w
		}
		w.mu.Unlock()
	}
	e.mu.Unlock()
	if target == nil {
		return 0, fmt.Errorf("no operator pod %s", pod)
	}
	target.mu.Lock()
	running := target.running
	target.kill = running != nil
	target.mu.Unlock()
	if running == nil {
		return 0, fmt.Errorf("the container of pod %s is not running", pod)
	}
	target.wake()
	select {
	case <-running.proc.done:
		return running.proc.PID, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Replica is one pod the emulator runs.
type Replica struct {
	Pod, IP string
	// PID is the container's process on the host; 0 while none runs.
	PID      int
	Ready    bool
	Restarts int
}

// replicas lists the pods the emulator runs, by name.
func (e *podEmulator) replicas() []Replica {
	e.mu.Lock()
	workers := e.workersLocked()
	e.mu.Unlock()
	out := make([]Replica, 0, len(workers))
	for _, w := range workers {
		w.mu.Lock()
		r := Replica{Pod: w.pod.Name, IP: w.pod.Status.PodIP, Ready: w.ready, Restarts: w.restarts}
		if w.running != nil {
			r.PID = w.running.proc.PID
		}
		gone := w.gone
		w.mu.Unlock()
		if !gone {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

func (e *podEmulator) workersLocked() []*podWorker {
	out := make([]*podWorker, 0, len(e.workers))
	for _, w := range e.workers {
		out = append(out, w)
	}
	return out
}

func (e *podEmulator) waitUntil(ctx context.Context, what string, check func() bool) error {
	deadline := time.Now().Add(time.Minute)
	for !check() {
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s: timed out", what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
