package controllers_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/controllers/targetsource"
	"github.com/gnmic-operator/gnmic-operator/controllers/tunnelpolicy"
	"github.com/gnmic-operator/gnmic-operator/metricsadapter"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// grantedUnsent are the permissions the operator is granted although a reconcile in envtest never sends them,
// each with the reason it is granted all the same. Every other granted permission must be sent by the spec
// below: a verb added to the RBAC without a use fails it.
var grantedUnsent = map[permission]string{
	// shard-member-role: the member Leases of a sharded operator (--sharding), which this spec's leader-elected
	// operator does not run (its get, update and create of its own Lease fall under the same grant);
	// sharding_test.go runs sharded members as the ServiceAccount and checks they send every one.
	{verb: "list", group: "coordination.k8s.io", resource: "leases"}:   "used with --sharding only",
	{verb: "watch", group: "coordination.k8s.io", resource: "leases"}:  "used with --sharding only",
	{verb: "delete", group: "coordination.k8s.io", resource: "leases"}: "used with --sharding only",
	{verb: "update", group: "operator.gnmic.dev", resource: "clusters/finalizers"}: "an ownerReference with " +
		"blockOwnerDeletion needs it where the OwnerReferencesPermissionEnforcement admission plugin runs, which " +
		"the suite's kube-apiserver does not: rbac_owner_references_test.go proves it on one that does",
}

var _ = Describe("The operator with only the permissions config/default grants it", Ordered, func() {
	var (
		install  *operatorInstall
		requests *apiRequests
		metrics  metricsadapter.Options
		f        *fleet
	)

	BeforeAll(func() {
		install = renderOperatorInstall()
		install.apply()
		waitForWritePolicies(install)
		requests = newAPIRequests()
		registerStaleAPIServices(install.namespace)
		DeferCleanup(listingInformers())

		metrics = metricsadapter.DefaultOptions()
		metrics.BindAddress, metrics.Port = "127.0.0.1", freePort("127.0.0.1")
		metrics.ServiceNamespace = install.namespace
		metrics.CertDir = GinkgoT().TempDir()
		metrics.ResyncPeriod = time.Second
		metrics.DrainPeriod = 0 // nothing routes to it; its API proxy stops right after the operator
		kubeconfig, stopProxy := startAPIProxy(install.restConfig(requests))
		metrics.AuthKubeconfig = kubeconfig
		DeferCleanup(stopProxy) // after the operator has stopped: cleanups run last in, first out
		op := startOperatorAs(install, requests, metrics)
		DeferCleanup(op.Stop)

		f = newTLSFleet(2)
		f.addInput()
	})

	AfterEach(func() {
		Expect(requests.refusals()).To(BeEmpty(), "the API server refused the operator")
	})
	// refusedNothing, first in an Eventually, stops it at once with the requests the API server refused: the
	// reason, rather than the state the refusal prevented.
	refusedNothing := func() {
		if refused := requests.refusals(); len(refused) > 0 {
			StopTrying("the API server refused the operator:\n" + strings.Join(refused, "\n")).Now()
		}
	}

	It("issues the collector certificates, places targets with credentials and TLS files, and sets readiness gates", func() {
		f.addTargets(0, 4)
		f.addTLSProfile("secure", "routers-tls", clientTLSFiles("routers"))
		f.addTargetWith("secure0", "secure")
		f.converged(5, 0)
		Eventually(func(g Gomega) {
			refusedNothing()
			g.Expect(f.targetTLSFiles(g)).To(HaveKey("routers-tls__ca.crt"))
			for o := range f.collectors {
				g.Expect(f.configured(o).Status).To(Equal(corev1.ConditionTrue), "pod %d", o)
			}
			accepted := meta.FindStatusCondition(f.input(g, "bus").Status.Conditions, operatorv1alpha1.ConditionAccepted)
			g.Expect(accepted).NotTo(BeNil())
			g.Expect(accepted.Status).To(Equal(metav1.ConditionTrue))
		}, 20*time.Second).Should(Succeed())
	})

	It("runs the tunnel server with its certificates and Service, and reports a TunnelTargetPolicy", func() {
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.GRPCTunnel = &operatorv1alpha1.GRPCTunnelSpec{Port: 57401} })
		Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.TunnelTargetPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "leaves", Namespace: f.ns},
			Spec: operatorv1alpha1.TunnelTargetPolicySpec{ClusterRefs: []string{f.name}, Profile: "routers",
				SubscriptionRefs: []string{"counters"}}})).To(Succeed())
		Eventually(func(g Gomega) {
			refusedNothing()
			for _, name := range []string{f.name + "-tunnel-ca", f.name + "-tunnel-tls", f.name + "-tunnel-client-tls"} {
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &corev1.Secret{})).To(Succeed())
			}
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-tunnel"}, &corev1.Service{})).To(Succeed())
			var p operatorv1alpha1.TunnelTargetPolicy
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "leaves"}, &p)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, operatorv1alpha1.ConditionReady)).To(BeTrue())
			for o, c := range f.collectors {
				last, ok := c.LastApplied()
				g.Expect(ok).To(BeTrue())
				g.Expect(last.Config.TunnelTargetMatches).To(HaveKey("leaves"), "pod %d", o)
			}
		}, 20*time.Second).Should(Succeed())
		By("turning the tunnel off again, for the specs that follow")
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.GRPCTunnel = nil })
		Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.TunnelTargetPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "leaves", Namespace: f.ns}})).To(Succeed())
		Eventually(func(g Gomega) {
			refusedNothing()
			err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-tunnel"}, &corev1.Service{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		}, 20*time.Second).Should(Succeed())
	})

	It("restores owned objects whose cluster label was removed by hand", func() {
		owned := []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.ConfigMap{}, &policyv1.PodDisruptionBudget{},
			&networkingv1.NetworkPolicy{}}
		for _, obj := range owned {
			f.editOwned(obj, func() { delete(obj.GetLabels(), operatorv1alpha1.ClusterLabel) })
		}
		targetTLS := client.ObjectKey{Namespace: f.ns, Name: f.name + "-target-tls"}
		f.editSecret(targetTLS.Name, func(s *corev1.Secret) { delete(s.Labels, operatorv1alpha1.ClusterLabel) })
		Eventually(func(g Gomega) {
			refusedNothing()
			for _, obj := range owned {
				g.Expect(k8sClient.Get(suiteCtx, f.key(), obj)).To(Succeed())
				g.Expect(obj.GetLabels()).To(HaveKeyWithValue(operatorv1alpha1.ClusterLabel, f.name), "%T", obj)
			}
			var s corev1.Secret
			g.Expect(k8sClient.Get(suiteCtx, targetTLS, &s)).To(Succeed())
			g.Expect(s.Labels).To(HaveKeyWithValue(operatorv1alpha1.ClusterLabel, f.name), "target TLS Secret")
		}, 20*time.Second).Should(Succeed())
		f.converged(5, 0)
	})

	It("deletes the PodDisruptionBudget at one pod and makes it again at three, one of which refuses its configuration", func() {
		f.scale(1)
		f.removePod(1)
		Eventually(func() bool {
			refusedNothing()
			return apierrors.IsNotFound(k8sClient.Get(suiteCtx, f.key(), &policyv1.PodDisruptionBudget{}))
		}, 20*time.Second).Should(BeTrue())
		f.converged(5, 0)

		f.scale(3)
		f.addPod(1)
		f.addPodWith(2, func(c *fakecollector.Collector) { c.FailApply(http.StatusBadRequest, "refused for the test") })
		// The same failure reported again is the same Event, counted up by a patch.
		Eventually(func(g Gomega) {
			refusedNothing()
			g.Expect(k8sClient.Get(suiteCtx, f.key(), &policyv1.PodDisruptionBudget{})).To(Succeed())
			g.Expect(f.configured(2).Status).To(Equal(corev1.ConditionFalse))
			g.Expect(f.mostRepeatedEvent(operatorv1alpha1.EventPushFailed)).To(BeNumerically(">=", 2))
		}, 30*time.Second).Should(Succeed())
		f.collectors[2].ClearApplyFailure()
		f.converged(5, 0)
	})

	It("registers the metrics APIs, corrects its own stale registration, reports a foreign one and serves a reader", func() {
		Eventually(func(g Gomega) {
			refusedNothing()
			ca := metricsCA(g, install.namespace, metrics.CertSecret)
			for _, name := range []string{"v1beta1.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io"} {
				service, caBundle := apiServiceTarget(g, name)
				g.Expect(service).To(Equal(install.namespace+"/"+metrics.ServiceName), name)
				g.Expect(caBundle).To(Equal(ca), name)
			}
			service, _ := apiServiceTarget(g, foreignMetricsAPI)
			g.Expect(service).To(Equal("keda/keda-operator-metrics-apiserver"))
			g.Expect(metricsAPIConflictEvents(g)).NotTo(BeEmpty())
		}, 30*time.Second).Should(Succeed())

		// A request the metrics API server authenticates (TokenReview) and authorizes (SubjectAccessReview)
		// with kube-apiserver, as the operator's ServiceAccount.
		token := metricsReaderToken(f.ns, install)
		Eventually(func() (string, error) {
			refusedNothing()
			return getMetric(metrics, install.namespace, token, "/apis/external.metrics.k8s.io/v1beta1/namespaces/"+f.ns+"/targets_demand")
		}, 30*time.Second).Should(ContainSubstring(`"metricName":"targets_demand"`))
	})

	It("deletes the NetworkPolicy of a Cluster that disables it", func() {
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			c := f.cluster()
			c.Spec.NetworkPolicy.Enabled = ptr.To(false)
			return k8sClient.Update(suiteCtx, c)
		})).To(Succeed())
		Eventually(func() bool {
			refusedNothing()
			return apierrors.IsNotFound(k8sClient.Get(suiteCtx, f.key(), &networkingv1.NetworkPolicy{}))
		}, 20*time.Second).Should(BeTrue())
	})

	It("publishes a prometheus output with a Service and a ServiceMonitor, and deletes both once the Cluster no longer sends to it", func() {
		installServiceMonitorCRD()
		f.addScrapedOutput("metrics", ":9273")
		svc := client.ObjectKey{Namespace: f.ns, Name: f.name + "-out-metrics"}
		Eventually(func(g Gomega) {
			refusedNothing()
			g.Expect(k8sClient.Get(suiteCtx, svc, &corev1.Service{})).To(Succeed())
			g.Expect(k8sClient.Get(suiteCtx, svc, serviceMonitor())).To(Succeed())
		}, 20*time.Second).Should(Succeed())
		f.updateOutput("metrics", func(o *operatorv1alpha1.Output) {
			o.Spec.Service = &operatorv1alpha1.OutputServiceSpec{ServiceMonitor: operatorv1alpha1.ServiceMonitorSpec{Interval: "1m"}}
		})
		Eventually(func(g Gomega) {
			refusedNothing()
			sm := serviceMonitor()
			g.Expect(k8sClient.Get(suiteCtx, svc, sm)).To(Succeed())
			g.Expect(sm.Object["spec"]).To(HaveKeyWithValue("endpoints", ContainElement(HaveKeyWithValue("interval", "1m"))))
		}, 20*time.Second).Should(Succeed())
		Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "scrape-metrics"}})).To(Succeed())
		Eventually(func(g Gomega) {
			refusedNothing()
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, svc, &corev1.Service{}))).To(BeTrue())
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, svc, serviceMonitor()))).To(BeTrue())
		}, 20*time.Second).Should(Succeed())
	})

	It("issues the gNMI server's certificates, which its write policy admits, and keeps and deletes its Service", func() {
		f.updateCluster(func(c *operatorv1alpha1.Cluster) {
			c.Spec.API.GNMI = &operatorv1alpha1.GNMIServerSpec{Enabled: ptr.To(true)}
		})
		gnmi := client.ObjectKey{Namespace: f.ns, Name: f.name + "-gnmi"}
		Eventually(func(g Gomega) {
			refusedNothing()
			g.Expect(k8sClient.Get(suiteCtx, gnmi, &corev1.Service{})).To(Succeed())
			for _, name := range []string{f.name + "-gnmi-ca", f.name + "-gnmi-tls", f.name + "-gnmi-client-tls"} {
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &corev1.Secret{})).To(Succeed())
			}
		}, 20*time.Second).Should(Succeed())
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.API.GNMI = nil })
		Eventually(func(g Gomega) {
			refusedNothing()
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, gnmi, &corev1.Service{}))).To(BeTrue())
		}, 20*time.Second).Should(Succeed())
	})

	It("runs a StatefulSet per domain once the Cluster has domains, and deletes the one named after the Cluster", func() {
		f.updateCluster(func(c *operatorv1alpha1.Cluster) {
			c.Spec.Domains = []operatorv1alpha1.ClusterDomain{{Name: "zone-a"}, {Name: "zone-b"}}
		})
		Eventually(func(g Gomega) {
			refusedNothing()
			for _, zone := range []string{"zone-a", "zone-b"} {
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-" + zone}, &appsv1.StatefulSet{})).To(Succeed())
			}
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, f.key(), &appsv1.StatefulSet{}))).To(BeTrue())
		}, 20*time.Second).Should(Succeed())
	})

	It("forgets a deleted Cluster, in the status of its Targets too", func() {
		Expect(k8sClient.Delete(suiteCtx, f.cluster())).To(Succeed())
		Eventually(func(g Gomega) {
			refusedNothing()
			var targets operatorv1alpha1.TargetList
			g.Expect(k8sClient.List(suiteCtx, &targets, client.InNamespace(f.ns))).To(Succeed())
			for _, t := range targets.Items {
				g.Expect(t.Status.ClusterStates).NotTo(HaveKey(f.name), "target %s", t.Name)
			}
		}, 20*time.Second).Should(Succeed())
	})

	It("balances a Deployment, a StatefulSet, a ReplicaSet and a Cluster through their scale subresources", func() {
		balanceEveryShippedKind(refusedNothing)
	})

	It("syncs a TargetSource: creates, updates and deletes its Targets and reports in its status", func() {
		syncTargetSource(refusedNothing)
	})

	It("takes a TargetSource's snapshot posted to its push endpoint and makes its Targets", func() {
		pushToTargetSource(refusedNothing)
	})

	It("sent every verb it is granted, where it is granted, but those listed with a reason in grantedUnsent", func() {
		By("waiting for the leader to renew its Lease")
		Eventually(func(g Gomega) {
			refusedNothing()
			var lease coordinationv1.Lease
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: install.namespace, Name: leaderElectionID}, &lease)).To(Succeed())
			g.Expect(lease.Spec.RenewTime).NotTo(BeNil())
			g.Expect(lease.Spec.AcquireTime).NotTo(BeNil())
			g.Expect(lease.Spec.RenewTime.After(lease.Spec.AcquireTime.Time)).To(BeTrue())
		}, 10*time.Second).Should(Succeed())

		GinkgoWriter.Printf("requests sent, by permission:\n  %s\n", strings.Join(requests.counts(), "\n  "))
		granted := map[permission]bool{}
		var unsent []string
		for _, g := range install.grants() {
			granted[g.permission] = true
			if _, listed := grantedUnsent[g.permission]; !listed && !requests.uses(g) {
				unsent = append(unsent, g.String())
			}
		}
		Expect(unsent).To(BeEmpty(), "granted, never sent: remove them from the RBAC, or list them in grantedUnsent with the reason")
		for p, reason := range grantedUnsent {
			Expect(granted).To(HaveKey(p), "grantedUnsent lists %s (%s), which is no longer granted", p, reason)
			Expect(requests.sends(p)).To(BeFalse(), "grantedUnsent lists %s, which the operator sends: remove it from the list", p)
		}
	})
})

// leaderElectionID is the default of --leader-election-id: config/rbac's leader-election-role names this Lease.
const leaderElectionID = "gnmic-operator.operator.gnmic.dev"

// startOperatorAs runs the operator as main.go builds it, with leader election and the metrics APIs, connected
// as the install's ServiceAccount through requests.
func startOperatorAs(install *operatorInstall, requests *apiRequests, metrics metricsadapter.Options) *operator {
	mgr, err := ctrl.NewManager(install.restConfig(requests), ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		Cache:                         cluster.CacheOptions(),
		NewCache:                      tripwires.newCache,
		Logger:                        ctrl.Log,
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		LeaderElection:                true,
		LeaderElectionID:              leaderElectionID,
		LeaderElectionNamespace:       install.namespace,
		LeaderElectionReleaseOnCancel: true,
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(metricsadapter.Setup(suiteCtx, mgr, metrics)).Error().NotTo(HaveOccurred())
	Expect(startBalancer(mgr)).To(Succeed())
	Expect((&tunnelpolicy.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)).To(Succeed())
	Expect(targetsource.NewReconciler(mgr).SetupWithManager(mgr)).To(Succeed())
	setupPushEndpoint(mgr, install.namespace)
	return runOperator(mgr, &cluster.Reconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Scheme:            scheme,
		Recorder:          mgr.GetEventRecorderFor("gnmic-operator"),
		Dialer:            &collector.PodIPDialer{HTTP: collector.DefaultHTTPClient()},
		PollInterval:      2 * time.Second,
		OperatorNamespace: install.namespace,
		// The ServiceMonitor CRD comes and goes within a spec.
		CRDRecheck: 300 * time.Millisecond,
	})
}

// addInput makes an Input the fleet's pipeline forwards, applying a Processor, so that the operator reports
// the Input's acceptance and where the Processor is used.
func (f *fleet) addInput() {
	f.addProcessor("tag", "event-add-tag", `{"add":{"source":"bus"}}`, nil)
	Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Input{ObjectMeta: metav1.ObjectMeta{Name: "bus", Namespace: f.ns},
		Spec: operatorv1alpha1.InputSpec{Type: "nats", Config: map[string]apiextensionsv1.JSON{"address": {Raw: []byte(`"nats.example:4222"`)}},
			EventProcessors: []string{"tag"}}})).To(Succeed())
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := f.pipeline(Default, "all")
		p.Spec.Inputs = &operatorv1alpha1.InputSelection{InputRefs: []string{"bus"}}
		return k8sClient.Update(suiteCtx, p)
	})).To(Succeed())
}

func (f *fleet) input(g Gomega, name string) *operatorv1alpha1.Input {
	var in operatorv1alpha1.Input
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &in)).To(Succeed())
	return &in
}

// editSecret changes the fleet's Secret as a user would.
func (f *fleet) editSecret(name string, change func(*corev1.Secret)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &corev1.Secret{}
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, s); err != nil {
			return err
		}
		change(s)
		return k8sClient.Update(suiteCtx, s)
	})).To(Succeed())
}

// mostRepeatedEvent is how often the most repeated of the Cluster's Events of the reason was reported.
func (f *fleet) mostRepeatedEvent(reason string) int32 {
	var list corev1.EventList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	var n int32
	for _, e := range list.Items {
		if e.Reason == reason && e.InvolvedObject.Name == f.name {
			n = max(n, e.Count)
		}
	}
	return n
}

// syncTargetSource runs a TargetSource over a NetBox of three devices, in a namespace of its own, through a
// change and a removal: the operator creates, updates and deletes Targets, reads the token Secret, and writes
// the TargetSource's status.
func syncTargetSource(refusedNothing func()) {
	netbox := fakenetbox.Start(3, "t0ken")
	DeferCleanup(netbox.Close)
	ns := "targetsource-rbac"
	Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "netbox"},
		Data: map[string][]byte{"token": []byte("t0ken")}})).To(Succeed())
	ts := &operatorv1alpha1.TargetSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "netbox"},
		Spec: operatorv1alpha1.TargetSourceSpec{
			HTTP: &operatorv1alpha1.HTTPInventory{URL: netbox.DevicesURL(2), Interval: &metav1.Duration{Duration: time.Hour},
				Auth: &operatorv1alpha1.HTTPAuth{Token: &operatorv1alpha1.HTTPTokenAuth{Scheme: "Token",
					SecretKeyRef: operatorv1alpha1.SecretKeyReference{Name: "netbox", Key: "token"}}}},
			Mapping: operatorv1alpha1.TargetMapping{Preset: operatorv1alpha1.MappingPresetNetBox,
				Defaults: operatorv1alpha1.TargetDefaults{Profile: "routers"}},
			Sync: operatorv1alpha1.TargetSync{DeleteAfterMisses: 1},
		}}
	Expect(k8sClient.Create(suiteCtx, ts)).To(Succeed())
	synced := func(g Gomega) *operatorv1alpha1.TargetSource {
		got := &operatorv1alpha1.TargetSource{}
		g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(ts), got)).To(Succeed())
		c := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionSynced)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		return got
	}
	Eventually(func(g Gomega) {
		refusedNothing()
		g.Expect(synced(g).Status.TargetsCreated).To(BeEquivalentTo(3))
	}, 20*time.Second).Should(Succeed())

	netbox.Change(func(d *fakenetbox.Device) { d.Platform.Slug = "eos" }, 1)
	netbox.Remove(2)
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &operatorv1alpha1.TargetSource{}
		if err := k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(ts), got); err != nil {
			return err
		}
		got.Annotations = map[string]string{operatorv1alpha1.SyncRequestedAnnotation: "1"}
		return k8sClient.Update(suiteCtx, got)
	})).To(Succeed())
	Eventually(func(g Gomega) {
		refusedNothing()
		got := synced(g)
		g.Expect(got.Status.LastSyncRequest).To(Equal("1"))
		g.Expect(got.Status.TargetsUpdated).To(BeEquivalentTo(1))
		g.Expect(got.Status.TargetsDeleted).To(BeEquivalentTo(1))
	}, 20*time.Second).Should(Succeed())
}
