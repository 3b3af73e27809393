package harness

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// Collectors runs a fake gNMIc collector for every collector pod (label operator.gnmic.dev/cluster) that
// has an IP, listening on that IP and the pod's REST port. A collector starts when its pod gets an IP and
// is closed when the pod is deleted, losing its configuration exactly like a restarted container.
type Collectors struct {
	mu     sync.Mutex
	byUID  map[types.UID]*runningCollector
	log    func(format string, args ...any)
	cancel context.CancelFunc
}

type runningCollector struct {
	pod       types.NamespacedName
	collector *fakecollector.Collector
}

// StartCollectors watches collector pods until Stop.
func (cp *ControlPlane) StartCollectors(ctx context.Context) (*Collectors, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := &Collectors{byUID: map[types.UID]*runningCollector{}, log: cp.log, cancel: cancel}
	factory := informers.NewSharedInformerFactoryWithOptions(cp.Clientset, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = operatorv1alpha1.ClusterLabel }))
	informer := factory.Core().V1().Pods().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(obj) },
		UpdateFunc: func(_, obj any) { c.observe(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				c.stop(pod.UID)
			}
		},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("watch collector pods: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		cancel()
		return nil, fmt.Errorf("collector pod informer did not sync")
	}
	return c, nil
}

func (c *Collectors) observe(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if pod.DeletionTimestamp != nil {
		c.stop(pod.UID)
		return
	}
	if pod.Status.PodIP == "" {
		return
	}
	port := restPort(pod)
	if port == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, running := c.byUID[pod.UID]; running {
		return
	}
	collector := fakecollector.New()
	addr := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port)))
	if err := collector.Start(addr); err != nil {
		c.log("fake collector for pod %s/%s on %s: %v", pod.Namespace, pod.Name, addr, err)
		return
	}
	c.byUID[pod.UID] = &runningCollector{pod: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, collector: collector}
}

func (c *Collectors) stop(uid types.UID) {
	c.mu.Lock()
	running, ok := c.byUID[uid]
	delete(c.byUID, uid)
	c.mu.Unlock()
	if ok {
		if err := running.collector.Close(); err != nil {
			c.log("close fake collector of %s: %v", running.pod, err)
		}
	}
}

func restPort(pod *corev1.Pod) int32 {
	for _, container := range pod.Spec.Containers {
		for _, p := range container.Ports {
			if p.Name == workload.RestPortName {
				return p.ContainerPort
			}
		}
	}
	return 0
}

// Targets returns, per pod name of the namespace, the targets its fake collector holds now.
func (c *Collectors) Targets(namespace string) map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]string{}
	for _, running := range c.byUID {
		if running.pod.Namespace == namespace {
			out[running.pod.Name] = running.collector.Targets()
		}
	}
	return out
}

// Stop closes every fake collector and stops watching.
func (c *Collectors) Stop() {
	c.cancel()
	c.mu.Lock()
	uids := make([]types.UID, 0, len(c.byUID))
	for uid := range c.byUID {
		uids = append(uids, uid)
	}
	c.mu.Unlock()
	for _, uid := range uids {
		c.stop(uid)
	}
}
