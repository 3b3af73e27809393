package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// Collectors runs a fake gNMIc collector for every collector pod (label operator.gnmic.dev/cluster) that
// has an IP, listening on that IP and the pod's REST port. A collector starts when its pod gets an IP and
// is closed when the pod is deleted, losing its configuration exactly like a restarted container. When a
// Node is deleted, the collectors of its pods are closed at once: the machine is gone, although the pod
// objects stay until kube-controller-manager's pod garbage collector removes them.
//
// Every collector behaves like the real gNMIc (DefaultCollectorOptions) unless a scenario chooses other
// options for its namespace (UseOptions), and answers as the gNMIc release of the pod's collector image
// unless the namespace's options or UseRelease say otherwise (collector_release.go).
type Collectors struct {
	mu    sync.Mutex
	byUID map[types.UID]*runningCollector
	// lostNodes are deleted Nodes: no collector starts for a pod bound to one.
	lostNodes map[string]bool
	// refusing are the pods (namespace/name) whose collectors refuse every configuration, including
	// collectors started later for a recreated pod of that name.
	refusing map[types.NamespacedName]string
	// options are the fake collector options chosen for a namespace's collectors.
	options map[string][]fakecollector.Option
	// releases are the gNMIc releases forced on pods (UseRelease), whatever their image.
	releases map[types.NamespacedName]string
	// blackholes are, per namespace, the blackholed devices whose start has not happened yet.
	blackholes map[string][]*Blackhole
	watching   bool
	// clientset reads the Secrets that collector pods mount, as the kubelet would.
	clientset kubernetes.Interface
	ctx       context.Context
	log       func(format string, args ...any)
	cancel    context.CancelFunc
}

// DefaultCollectorOptions are the options every fake collector starts with unless its namespace chose
// others: fakecollector.Realistic(), the real collector's measured behaviour. An apply is acknowledged once
// stored; its target changes are worked off later, one at a time, from a 128-entry buffer whose overflow is
// dropped without an error.
func DefaultCollectorOptions() []fakecollector.Option {
	return []fakecollector.Option{fakecollector.Realistic()}
}

// UseOptions makes the collectors started from now on for pods of namespace use opts instead of
// DefaultCollectorOptions (no option at all: a fake that acts on every change within the apply). Running
// collectors keep the options they started with.
func (c *Collectors) UseOptions(namespace string, opts ...fakecollector.Option) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.options[namespace] = append([]fakecollector.Option{}, opts...)
}

type runningCollector struct {
	pod       types.NamespacedName
	node      string
	collector *fakecollector.Collector
	// tunnelAddr is where its tunnel server listens, "" without one (tunnel.go).
	tunnelAddr string
}

// StartCollectors watches collector pods and Nodes until Stop.
func (cp *ControlPlane) StartCollectors(ctx context.Context) (*Collectors, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := &Collectors{
		byUID: map[types.UID]*runningCollector{}, lostNodes: map[string]bool{},
		refusing: map[types.NamespacedName]string{}, options: map[string][]fakecollector.Option{},
		releases:   map[types.NamespacedName]string{},
		blackholes: map[string][]*Blackhole{}, ctx: ctx, log: cp.log, cancel: cancel, clientset: cp.Clientset,
	}
	pods := informers.NewSharedInformerFactoryWithOptions(cp.Clientset, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = operatorv1alpha1.ClusterLabel }))
	podInformer := pods.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(obj) },
		UpdateFunc: func(_, obj any) { c.observe(obj) },
		DeleteFunc: func(obj any) {
			if pod, ok := deletedObject(obj).(*corev1.Pod); ok {
				c.stop(pod.UID)
			}
		},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("watch collector pods: %w", err)
	}
	nodes := informers.NewSharedInformerFactory(cp.Clientset, 0)
	nodeInformer := nodes.Core().V1().Nodes().Informer()
	if _, err := nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if node, ok := deletedObject(obj).(*corev1.Node); ok {
				c.loseNode(node.Name)
			}
		},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	pods.Start(ctx.Done())
	nodes.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced, nodeInformer.HasSynced) {
		cancel()
		return nil, fmt.Errorf("collector pod and node informers did not sync")
	}
	return c, nil
}

func deletedObject(obj any) any {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return tombstone.Obj
	}
	return obj
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
	_, running := c.byUID[pod.UID]
	c.mu.Unlock()
	if running {
		return
	}
	serverTLS, err := c.apiTLS(pod)
	if err != nil {
		// The kubelet does not start a container whose Secret volume it cannot fill: look again shortly.
		c.log("fake collector for pod %s/%s waits for its TLS Secret: %v", pod.Namespace, pod.Name, err)
		time.AfterFunc(time.Second, func() {
			if c.ctx.Err() == nil {
				c.observe(pod)
			}
		})
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, running := c.byUID[pod.UID]; running || c.lostNodes[pod.Spec.NodeName] {
		return
	}
	name := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	collector := c.newCollector(pod, serverTLS)
	addr := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port)))
	if err := collector.Start(addr); err != nil {
		_ = collector.Close() // ends its change queue's worker
		c.log("fake collector for pod %s/%s on %s: %v", pod.Namespace, pod.Name, addr, err)
		return
	}
	tunnelAddr, err := c.serveTunnel(pod, collector)
	if err != nil {
		c.log("fake collector for pod %s/%s runs no tunnel server: %v", pod.Namespace, pod.Name, err)
	}
	c.byUID[pod.UID] = &runningCollector{pod: name, node: pod.Spec.NodeName, collector: collector, tunnelAddr: tunnelAddr}
}

// newCollector is the one place fake collectors are made: answering as the release of the pod's image, with
// the options of the pod's namespace (DefaultCollectorOptions unless UseOptions chose others), later options
// winning, then the release UseRelease forced on the pod; refusing configurations when the pod was told to,
// and with the namespace's pending blackholes. Callers hold c.mu.
func (c *Collectors) newCollector(p *corev1.Pod, serverTLS *tls.Config) *fakecollector.Collector {
	pod := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	nsOpts, chosen := c.options[pod.Namespace]
	if !chosen {
		nsOpts = DefaultCollectorOptions()
	}
	opts := append(imageRelease(p), nsOpts...)
	if release, forced := c.releases[pod]; forced {
		opts = append(opts, fakecollector.WithRelease(release))
	}
	if serverTLS != nil {
		opts = append(opts, fakecollector.WithTLS(serverTLS))
	}
	collector := fakecollector.New(opts...)
	if reason, refuse := c.refusing[pod]; refuse {
		collector.FailApply(http.StatusInternalServerError, reason)
	}
	for _, b := range c.blackholes[pod.Namespace] {
		collector.Blackhole(b.Target, b.Hold)
	}
	return collector
}

// apiTLS is the TLS the pod's collector serves its REST API with, as gNMIc does from the files of the Secret
// volume mounted at workload.APITLSDir (its certificate, its key, and the CA its clients' certificates must
// come from); nil when the pod mounts none (a Cluster that opted out of TLS).
func (c *Collectors) apiTLS(pod *corev1.Pod) (*tls.Config, error) {
	var volume string
	for _, ctr := range pod.Spec.Containers {
		for _, m := range ctr.VolumeMounts {
			if m.MountPath == workload.APITLSDir {
				volume = m.Name
			}
		}
	}
	if volume == "" {
		return nil, nil
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name != volume || v.Secret == nil {
			continue
		}
		secret, err := c.clientset.CoreV1().Secrets(pod.Namespace).Get(c.ctx, v.Secret.SecretName, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read Secret %s: %w", v.Secret.SecretName, err)
		}
		return fakecollector.MutualTLS(secret.Data["tls.crt"], secret.Data["tls.key"], secret.Data["ca.crt"])
	}
	return nil, fmt.Errorf("volume %s mounted at %s is not a Secret volume", volume, workload.APITLSDir)
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

// loseNode closes the collectors of every pod bound to the deleted Node.
func (c *Collectors) loseNode(node string) {
	c.mu.Lock()
	c.lostNodes[node] = true
	var uids []types.UID
	for uid, running := range c.byUID {
		if running.node == node {
			uids = append(uids, uid)
		}
	}
	c.mu.Unlock()
	for _, uid := range uids {
		c.stop(uid)
	}
	c.log("node %s deleted: closed %d collector(s)", node, len(uids))
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

// Runs returns, per pod name of the namespace, the targets its fake collector runs, each with whether it
// collects (connection READY, every subscription running).
func (c *Collectors) Runs(namespace string) map[string]map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]map[string]bool{}
	for _, running := range c.byUID {
		if running.pod.Namespace != namespace {
			continue
		}
		runs := map[string]bool{}
		for _, t := range running.collector.Targets() {
			if st, ok := running.collector.TargetStatus(t); ok {
				runs[t] = st.Collecting()
			}
		}
		out[running.pod.Name] = runs
	}
	return out
}

// Collector returns the running fake collector of a pod, if any.
func (c *Collectors) Collector(namespace, pod string) (*fakecollector.Collector, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, running := range c.byUID {
		if running.pod == (types.NamespacedName{Namespace: namespace, Name: pod}) {
			return running.collector, true
		}
	}
	return nil, false
}

// RefuseConfig makes the collector of the named pod, and of every later pod of that name, answer each
// configuration apply with 500 and reason, as a collector with a broken config store would.
func (c *Collectors) RefuseConfig(namespace, pod, reason string) {
	name := types.NamespacedName{Namespace: namespace, Name: pod}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refusing[name] = reason
	for _, running := range c.byUID {
		if running.pod == name {
			running.collector.FailApply(http.StatusInternalServerError, reason)
		}
	}
}

// AcceptConfig undoes RefuseConfig.
func (c *Collectors) AcceptConfig(namespace, pod string) {
	name := types.NamespacedName{Namespace: namespace, Name: pod}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.refusing, name)
	for _, running := range c.byUID {
		if running.pod == name {
			running.collector.ClearApplyFailure()
		}
	}
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
