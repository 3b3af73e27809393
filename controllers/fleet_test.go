package controllers_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/domains"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

const password = "s3cr3t-Pa55w0rd-never-logged"

// fleetSeq gives every fleet its own loopback /24, so that its collectors can all listen on the Cluster's
// REST port, each on its own pod IP, as real pods do.
var fleetSeq atomic.Int32

// fleet is a Cluster whose collector pods the test plays: envtest has no StatefulSet controller, so the test
// creates each Pod, marks it Ready with an IP on the loopback range, and runs a fake collector at that IP.
type fleet struct {
	ns, name   string
	subnet     int
	port       int
	collectors map[int]*fakecollector.Collector
	// serverTLS, when set, is what every collector serves with: the certificate the operator issued, requiring
	// the operator's client certificate (newTLSFleet). Otherwise a collector of a Cluster with TLS (the
	// default) reads the issued certificate at its first handshake and keeps it (issuedTLS).
	serverTLS *tls.Config
	// plainHTTP is true for a Cluster that opted out of TLS: its collectors serve plain HTTP.
	plainHTTP bool
	// collectorOptions configure every collector the fleet starts.
	collectorOptions []fakecollector.Option
	// domains are the names of the Cluster's spec.domains, in order; empty for a Cluster without domains.
	domains []string
	// image is the collector image of the pods the fleet starts: the Cluster's spec.image, as a StatefulSet
	// would give them.
	image string
}

// newFleet is a fleet of a Cluster with the default collector API: mutual TLS with the certificates the
// operator issues.
func newFleet(replicas int, podCapacity *int32, grace string) *fleet {
	return startFleet(replicas, podCapacity, grace, false)
}

// newTLSFleet is a fleet whose Cluster spells out spec.api.tls: {} (as Clusters written before TLS became the
// default do) and whose collectors serve with the issued certificate from the start.
func newTLSFleet(replicas int) *fleet {
	return startFleet(replicas, nil, "", true)
}

// newFleetOf is a fleet whose collectors are started with opts, for example fakecollector.Realistic().
func newFleetOf(replicas int, opts ...fakecollector.Option) *fleet {
	return startFleet(replicas, nil, "", false, opts...)
}

// newFleetWith is a fleet whose Cluster tune changes before it is created.
func newFleetWith(replicas int, tune func(*operatorv1alpha1.Cluster), opts ...fakecollector.Option) *fleet {
	return startTunedFleet(replicas, nil, "", false, tune, opts...)
}

func startFleet(replicas int, podCapacity *int32, grace string, withTLS bool, opts ...fakecollector.Option) *fleet {
	return startTunedFleet(replicas, podCapacity, grace, withTLS, nil, opts...)
}

func startTunedFleet(replicas int, podCapacity *int32, grace string, withTLS bool, tune func(*operatorv1alpha1.Cluster),
	opts ...fakecollector.Option) *fleet {
	f := &fleet{subnet: int(fleetSeq.Add(1)), collectors: map[int]*fakecollector.Collector{}, collectorOptions: opts}
	f.name = "fleet"
	f.ns = fmt.Sprintf("fleet-%d", f.subnet)
	f.port = freePort(f.ip(0))
	Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})).To(Succeed())
	f.createTelemetryModel()

	c := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: f.ns}}
	c.Spec.Image = "ghcr.io/openconfig/gnmic:test"
	c.Spec.Replicas = ptr.To(int32(replicas))
	c.Spec.API.RestPort = int32(f.port)
	c.Spec.TargetDistribution.PodCapacity = podCapacity
	if grace != "" {
		d, err := time.ParseDuration(grace)
		Expect(err).NotTo(HaveOccurred())
		c.Spec.TargetDistribution.UnreadyGracePeriod = &metav1.Duration{Duration: d}
	}
	if withTLS {
		c.Spec.API.TLS = &operatorv1alpha1.APITLS{}
	}
	if tune != nil {
		tune(c)
	}
	f.plainHTTP = c.Spec.API.Insecure != nil
	f.image = c.Spec.Image
	for _, d := range c.Spec.Domains {
		f.domains = append(f.domains, d.Name)
	}
	Expect(k8sClient.Create(suiteCtx, c)).To(Succeed())
	if withTLS {
		f.serverTLS = f.issuedServerTLS()
	}
	for o := 0; o < replicas; o++ {
		f.addPod(o)
	}
	DeferCleanup(f.close)
	return f
}

// ip is the pod's IP. A domain's pods (ordinals from domains.Slot) get 40 addresses per domain.
func (f *fleet) ip(ordinal int) string {
	index, inDomain := domains.Locate(ordinal)
	return fmt.Sprintf("127.0.%d.%d", f.subnet, index*40+inDomain+1)
}

func freePort(ip string) int {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// createTelemetryModel makes the profile, credentials, subscription, output and pipeline every target of the
// fleet uses; targets are selected by the label fleet=<name>.
func (f *fleet) createTelemetryModel() {
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: f.ns},
			StringData: map[string]string{"username": "admin", "password": password}},
		&operatorv1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Name: "routers", Namespace: f.ns},
			Spec: operatorv1alpha1.TargetProfileSpec{CredentialsRef: "creds"}},
		&operatorv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "counters", Namespace: f.ns},
			Spec: operatorv1alpha1.SubscriptionSpec{Paths: []string{"/interfaces/interface/state/counters"}, Mode: "STREAM/SAMPLE",
				SampleInterval: &metav1.Duration{Duration: 10 * time.Second}}},
		&operatorv1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Name: "file", Namespace: f.ns},
			Spec: operatorv1alpha1.OutputSpec{Type: "file"}},
		&operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: f.ns},
			Spec: operatorv1alpha1.PipelineSpec{ClusterRef: f.name,
				TargetSelectors:  []metav1.LabelSelector{{MatchLabels: map[string]string{"fleet": f.name}}},
				SubscriptionRefs: []string{"counters"},
				Outputs:          &operatorv1alpha1.OutputSelection{OutputRefs: []string{"file"}}}},
	}
	for _, o := range objs {
		Expect(k8sClient.Create(suiteCtx, o)).To(Succeed())
	}
}

// addTargets creates targets r000, r001, … (from, from+n).
func (f *fleet) addTargets(from, n int) {
	for i := from; i < from+n; i++ {
		t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: targetName(i), Namespace: f.ns,
			Labels: map[string]string{"fleet": f.name}},
			Spec: operatorv1alpha1.TargetSpec{Address: fmt.Sprintf("10.%d.%d.%d:57400", i/65536, i/256%256, i%256), Profile: "routers"}}
		Expect(k8sClient.Create(suiteCtx, t)).To(Succeed())
	}
}

func targetName(i int) string { return fmt.Sprintf("r%04d", i) }

func (f *fleet) deleteTarget(i int) {
	t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: targetName(i), Namespace: f.ns}}
	Expect(k8sClient.Delete(suiteCtx, t)).To(Succeed())
}

// podName is the name of the pod with the given ordinal: <fleet>-<ordinal>, or <fleet>-<domain>-<ordinal in
// the domain> for a fleet with domains (ordinal from domains.Slot).
func (f *fleet) podName(ordinal int) string {
	if len(f.domains) == 0 {
		return f.name + "-" + strconv.Itoa(ordinal)
	}
	index, inDomain := domains.Locate(ordinal)
	return f.name + "-" + f.domains[index] + "-" + strconv.Itoa(inDomain)
}

// addPod starts a fake collector at the pod's IP and creates the Pod, Ready.
func (f *fleet) addPod(ordinal int) { f.addPodOn(ordinal, "") }

// addPodOn is addPod for a pod bound to a Node.
func (f *fleet) addPodOn(ordinal int, node string) {
	col := f.newCollector()
	Expect(col.Start(net.JoinHostPort(f.ip(ordinal), strconv.Itoa(f.port)))).To(Succeed())
	f.collectors[ordinal] = col
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: f.podName(ordinal), Namespace: f.ns,
			Labels: f.podLabels(ordinal)},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "gnmic", Image: f.image}}},
	}
	Expect(k8sClient.Create(suiteCtx, pod)).To(Succeed())
	f.setReady(ordinal, true)
}

// podLabels are the labels the StatefulSet gives the pod: the Cluster's, and the domain's on a fleet with
// domains.
func (f *fleet) podLabels(ordinal int) map[string]string {
	labels := map[string]string{operatorv1alpha1.ClusterLabel: f.name}
	if len(f.domains) > 0 {
		index, _ := domains.Locate(ordinal)
		labels[operatorv1alpha1.DomainLabel] = f.domains[index]
	}
	return labels
}

// newCollector is a collector as the fleet's pods run it.
func (f *fleet) newCollector() *fakecollector.Collector {
	opts := slices.Clone(f.collectorOptions)
	switch {
	case f.serverTLS != nil:
		opts = append(opts, fakecollector.WithTLS(f.serverTLS))
	case !f.plainHTTP:
		opts = append(opts, fakecollector.WithTLS(f.issuedTLS()))
	}
	return fakecollector.New(opts...)
}

// restartContainer replaces the pod's collector by a fresh one on the same address (a restarted container
// keeps its pod, its IP and only its bootstrap configuration) and reports the restart in the pod's status.
func (f *fleet) restartContainer(ordinal int) {
	Expect(f.collectors[ordinal].Close()).To(Succeed())
	col := f.newCollector()
	Expect(col.Start(net.JoinHostPort(f.ip(ordinal), strconv.Itoa(f.port)))).To(Succeed())
	f.collectors[ordinal] = col
	f.updatePodStatus(ordinal, func(pod *corev1.Pod) {
		restarts := int32(1)
		for _, c := range pod.Status.ContainerStatuses {
			restarts = c.RestartCount + 1
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "gnmic", Image: "ghcr.io/openconfig/gnmic:test",
			Ready: true, RestartCount: restarts}}
	})
}

// updatePodStatus changes the pod's status as the kubelet would, retrying when the operator wrote the pod's
// readiness gate meanwhile.
func (f *fleet) updatePodStatus(ordinal int, change func(*corev1.Pod)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.podName(ordinal)}, pod); err != nil {
			return err
		}
		change(pod)
		return k8sClient.Status().Update(suiteCtx, pod)
	})).To(Succeed())
}

// setReady plays the kubelet: it sets the pod's Ready condition (and drops the others).
func (f *fleet) setReady(ordinal int, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	f.updatePodStatus(ordinal, func(pod *corev1.Pod) {
		pod.Status.PodIP = f.ip(ordinal)
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	})
}

// setGated marks the pod as the kubelet does while the pod's readiness gate is not met: its containers are
// ready, the pod is not.
func (f *fleet) setGated(ordinal int) {
	f.updatePodStatus(ordinal, func(pod *corev1.Pod) {
		pod.Status.PodIP = f.ip(ordinal)
		pod.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()},
		}
	})
}

// pod is the collector pod as the API server has it.
func (f *fleet) pod(ordinal int) *corev1.Pod {
	pod := &corev1.Pod{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.podName(ordinal)}, pod)).To(Succeed())
	return pod
}

// configured is the pod's readiness-gate condition, or an empty one when the pod has none.
func (f *fleet) configured(ordinal int) corev1.PodCondition {
	for _, c := range f.pod(ordinal).Status.Conditions {
		if c.Type == operatorv1alpha1.ConditionPodConfigured {
			return c
		}
	}
	return corev1.PodCondition{}
}

// removePod deletes the Pod and stops its collector (its state is lost, as with a real pod).
func (f *fleet) removePod(ordinal int) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: f.podName(ordinal), Namespace: f.ns}}
	Expect(k8sClient.Delete(suiteCtx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	Expect(f.collectors[ordinal].Close()).To(Succeed())
	delete(f.collectors, ordinal)
}

func (f *fleet) scale(replicas int) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := f.cluster()
		c.Spec.Replicas = ptr.To(int32(replicas))
		return k8sClient.Update(suiteCtx, c)
	})).To(Succeed())
}

func (f *fleet) cluster() *operatorv1alpha1.Cluster {
	c := &operatorv1alpha1.Cluster{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name}, c)).To(Succeed())
	return c
}

// holdings is what each collector holds, by ordinal.
func (f *fleet) holdings() map[int][]string {
	out := map[int][]string{}
	for o, col := range f.collectors {
		out[o] = col.Targets()
	}
	return out
}

// statusPods is each target's pod as Target status says, for this fleet's Cluster.
func (f *fleet) statusPods() map[string]string {
	var list operatorv1alpha1.TargetList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	out := map[string]string{}
	for _, t := range list.Items {
		out[t.Name] = t.Status.ClusterStates[f.name].Pod
	}
	return out
}

// converged waits until every collector holds exactly the targets Target status places on it, every one
// of n targets is on exactly one collector or unassigned, and Cluster status agrees; it returns holdings.
func (f *fleet) converged(n, unassigned int) map[int][]string {
	var held map[int][]string
	Eventually(func(g Gomega) {
		c := f.cluster()
		g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
		g.Expect(c.Status.TargetsCount).To(BeEquivalentTo(n))
		g.Expect(c.Status.UnassignedTargets).To(BeEquivalentTo(unassigned))
		g.Expect(c.Status.ReadyReplicas).To(BeEquivalentTo(len(f.collectors)), "ready pods in status")
		g.Expect(c.Status.Collectors).To(HaveLen(len(f.collectors)))
		for _, col := range c.Status.Collectors {
			g.Expect(col.Error).To(BeEmpty(), "pod %s", col.Pod)
			g.Expect(col.ConfigHash).NotTo(BeEmpty(), "pod %s", col.Pod)
		}
		held = f.holdings()
		pods := f.statusPods()
		seen := map[string]int{}
		for o, names := range held {
			for _, name := range names {
				seen[name]++
				g.Expect(pods[name]).To(Equal(f.podName(o)), "target %s is on pod %d", name, o)
			}
		}
		g.Expect(seen).To(HaveLen(n-unassigned), "targets held by collectors")
		for name, times := range seen {
			g.Expect(times).To(Equal(1), "target %s is on %d collectors", name, times)
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	return held
}

// connected waits until the statuses of all n targets show the collectors' connections READY.
func (f *fleet) connected(n int) {
	Eventually(func(g Gomega) {
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		for _, t := range list.Items {
			g.Expect(t.Status.ClusterStates[f.name].ConnectionState).To(Equal("READY"), "target %s", t.Name)
		}
	}, 30*time.Second).Should(Succeed())
}

func loads(held map[int][]string) []int {
	var out []int
	for _, names := range held {
		out = append(out, len(names))
	}
	sort.Ints(out)
	return out
}

func condition(c *operatorv1alpha1.Cluster, kind string) metav1.Condition {
	for _, cond := range c.Status.Conditions {
		if cond.Type == kind {
			return cond
		}
	}
	return metav1.Condition{}
}

// close stops the fleet's collectors and deletes its Cluster, so that the operators of later specs do not
// keep reconciling it (the suite's envtest runs no garbage collector: its Targets and pods stay, unread).
func (f *fleet) close() {
	for _, col := range f.collectors {
		_ = col.Close()
	}
	_ = k8sClient.Delete(suiteCtx, &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.name}})
}

// dump is an object list as JSON, for scanning it for text that must not be there.
func dump(list client.ObjectList) string {
	raw, err := json.Marshal(list)
	Expect(err).NotTo(HaveOccurred())
	return string(raw)
}

// issuedServerTLS waits for the serving certificate the operator issues and builds the collectors' TLS from
// it, as the collector does from the files mounted from that Secret.
func (f *fleet) issuedServerTLS() *tls.Config {
	var cfg *tls.Config
	Eventually(func() (err error) {
		cfg, err = f.readIssuedTLS()
		return err
	}, 20*time.Second).Should(Succeed())
	return cfg
}

// issuedTLS is the TLS of one collector of a Cluster with TLS: at its first handshake it reads the serving
// certificate the operator issued and keeps it for its life, as gNMIc reads the files mounted from that
// Secret once, when it starts (a real pod waits for the Secret; a collector of the test may start before it).
// Like gNMIc with ca-file set, it requires a client certificate signed by the Cluster's CA.
func (f *fleet) issuedTLS() *tls.Config {
	var (
		mu     sync.Mutex
		loaded *tls.Config
	)
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		if loaded == nil {
			cfg, err := f.readIssuedTLS()
			if err != nil {
				return nil, err
			}
			loaded = cfg
		}
		return loaded, nil
	}}
}

// readIssuedTLS is the collectors' TLS from the serving certificate in <cluster>-api-tls, as it is now.
func (f *fleet) readIssuedTLS() (*tls.Config, error) {
	var secret corev1.Secret
	if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-api-tls"}, &secret); err != nil {
		return nil, err
	}
	return fakecollector.MutualTLS(secret.Data["tls.crt"], secret.Data["tls.key"], secret.Data["ca.crt"])
}

// operatorHTTPClient calls the fleet's collectors as the operator does: with its client certificate, trusting
// the Cluster's CA for the pod's DNS name.
func (f *fleet) operatorHTTPClient(ordinal int) *http.Client {
	secret := f.secret(f.name + "-api-ca")
	cert, err := tls.X509KeyPair(secret.Data["client.crt"], secret.Data["client.key"])
	Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(secret.Data["ca.crt"])).To(BeTrue())
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		ServerName: fmt.Sprintf("%s.%s.%s.svc", f.podName(ordinal), f.name, f.ns)}}}
}
