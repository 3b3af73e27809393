package controllers_test

import (
	"crypto/x509"
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

var _ = Describe("Prometheus outputs and the gNMI server", Ordered, func() {
	BeforeAll(func() {
		op := startOperatorPolling(2*time.Second, func(r *cluster.Reconciler) { r.CRDRecheck = 300 * time.Millisecond })
		DeferCleanup(op.Stop)
	})

	It("gives a prometheus output a Service on the Cluster and a named container port without rolling the pods, and says once that no ServiceMonitor can be made", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 2)
		f.converged(2, 0)
		before := f.statefulSet()
		f.addScrapedOutput("metrics", ":9273")
		svc := &corev1.Service{}
		Eventually(func() error {
			return k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-out-metrics"}, svc)
		}, 10*time.Second).Should(Succeed())
		By("naming the port on the pods only once their template changes for another reason")
		f.templateUnchanged(before, 3*time.Second)
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.PodAnnotations = map[string]string{"example.com/rev": "2"} })
		Eventually(func(g Gomega) {
			g.Expect(f.collectorPorts(g)).To(ContainElement(corev1.ContainerPort{Name: "prom-metrics", ContainerPort: 9273, Protocol: corev1.ProtocolTCP}))
		}, 10*time.Second).Should(Succeed())
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		Expect(svc.Spec.Selector).To(Equal(map[string]string{operatorv1alpha1.ClusterLabel: f.name}))
		Expect(svc.Spec.Ports).To(HaveLen(1))
		Expect(svc.Spec.Ports[0].Name).To(Equal("prom-metrics"))
		Expect(svc.Spec.Ports[0].Port).To(Equal(int32(9273)))
		Expect(svc.Spec.Ports[0].TargetPort.IntVal).To(Equal(int32(9273)))
		Expect(metav1.IsControlledBy(svc, f.cluster())).To(BeTrue(), "the Cluster owns the Service: it is collected with it")

		By("saying in a condition, and in one event, that the ServiceMonitor CRD is not installed")
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(f.cluster().Status.Conditions, operatorv1alpha1.ConditionServiceMonitors)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonServiceMonitorCRDMissing))
		}, 10*time.Second).Should(Succeed())
		Consistently(func() int32 { return f.eventCount(operatorv1alpha1.EventServiceMonitorCRDMissing) }, 5*time.Second).
			Should(BeNumerically("==", 1), "said once, not every reconcile")

		By("following the Output's service settings, keeping the node port the API server allocated")
		f.updateOutput("metrics", func(o *operatorv1alpha1.Output) {
			o.Spec.Service = &operatorv1alpha1.OutputServiceSpec{Type: corev1.ServiceTypeNodePort,
				Labels: map[string]string{"team": "net"}, Annotations: map[string]string{"example.com/scrape": "yes"}}
		})
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
			g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeNodePort))
			g.Expect(svc.Spec.Ports[0].NodePort).NotTo(BeZero())
			g.Expect(svc.Labels).To(HaveKeyWithValue("team", "net"))
			g.Expect(svc.Annotations).To(HaveKeyWithValue("example.com/scrape", "yes"))
		}, 10*time.Second).Should(Succeed())
		nodePort, version := svc.Spec.Ports[0].NodePort, svc.ResourceVersion
		Consistently(func(g Gomega) {
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
			g.Expect(svc.ResourceVersion).To(Equal(version), "an unchanged Service costs no write")
		}, 4*time.Second).Should(Succeed())
		Expect(svc.Spec.Ports[0].NodePort).To(Equal(nodePort))

		By("deleting the Service once the Cluster no longer sends to the output, and the port name with the next template")
		Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "scrape-metrics"}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(svc), &corev1.Service{}))).To(BeTrue())
		}, 10*time.Second).Should(Succeed())
		f.templateUnchanged(f.statefulSet(), 3*time.Second)
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.PodAnnotations = map[string]string{"example.com/rev": "3"} })
		Eventually(func(g Gomega) {
			g.Expect(f.collectorPorts(g)).To(HaveLen(1), "only the REST API's port is left")
		}, 10*time.Second).Should(Succeed())
		Expect(k8sClient.Get(suiteCtx, f.key(), &corev1.Service{})).To(Succeed(), "the headless Service stays")
	})

	It("refuses the later of two outputs on one port, naming both, and pushes nothing of it", func() {
		f := newFleet(1, nil, "")
		f.addTargets(0, 1)
		f.converged(1, 0)
		f.addScrapedOutput("first", ":9300")
		Eventually(func(g Gomega) { g.Expect(f.appliedOutputs(g, 0)).To(HaveKey("first")) }, 10*time.Second).Should(Succeed())
		f.addScrapedOutput("second", "0.0.0.0:9300")
		f.addScrapedOutput("on-rest", fmt.Sprintf(":%d", f.port))

		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(f.cluster().Status.Conditions, operatorv1alpha1.ConditionOutputPortsAvailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonPortConflict))
			g.Expect(c.Message).To(ContainSubstring(`Output second listens on port 9300, which output "first" listens on already`))
			g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf("Output on-rest listens on port %d, which the collectors' REST API", f.port)))

			second := f.output(g, "second")
			g.Expect(second.Status.PortConflicts).To(HaveLen(1))
			g.Expect(second.Status.PortConflicts[0].Cluster).To(Equal(f.name))
			g.Expect(second.Status.PortConflicts[0].Message).To(ContainSubstring(`output "first"`))
			pa := meta.FindStatusCondition(second.Status.Conditions, operatorv1alpha1.ConditionPortAvailable)
			g.Expect(pa).NotTo(BeNil())
			g.Expect(pa.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(pa.Message).To(ContainSubstring("Cluster fleet: second listens on port 9300"))

			first := meta.FindStatusCondition(f.output(g, "first").Status.Conditions, operatorv1alpha1.ConditionPortAvailable)
			g.Expect(first).NotTo(BeNil())
			g.Expect(first.Status).To(Equal(metav1.ConditionTrue))
		}, 10*time.Second).Should(Succeed())
		Expect(f.eventCount(operatorv1alpha1.EventOutputPortConflict)).To(BeNumerically(">=", 1))

		By("sending the collectors the first output, and neither refused one, nor their Services")
		applied := f.appliedOutputs(Default, 0)
		Expect(applied).To(HaveKey("first"))
		Expect(applied).NotTo(HaveKey("second"))
		Expect(applied).NotTo(HaveKey("on-rest"))
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-out-first"}, &corev1.Service{})).To(Succeed())
		Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-out-second"}, &corev1.Service{}))).To(BeTrue())

		By("taking the refused output once its port is free")
		Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "first"}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(f.appliedOutputs(g, 0)).To(HaveKey("second"))
			second := f.output(g, "second")
			g.Expect(second.Status.PortConflicts).To(BeEmpty())
			g.Expect(meta.IsStatusConditionTrue(second.Status.Conditions, operatorv1alpha1.ConditionPortAvailable)).To(BeTrue())
		}, 10*time.Second).Should(Succeed())
	})

	It("leaves alone a Service of the output's name that is not the Cluster's, and warns once", func() {
		f := newFleet(1, nil, "")
		f.addTargets(0, 1)
		f.converged(1, 0)
		theirs := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "fleet-out-metrics", Labels: map[string]string{"team": "other"}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "other"}, Ports: []corev1.ServicePort{{Port: 80}}}}
		Expect(k8sClient.Create(suiteCtx, theirs)).To(Succeed())
		f.addScrapedOutput("metrics", "")
		Eventually(func() int32 { return f.eventCount(operatorv1alpha1.EventNameTaken) }, 10*time.Second).Should(BeNumerically("==", 1))
		Consistently(func(g Gomega) {
			var svc corev1.Service
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(theirs), &svc)).To(Succeed())
			g.Expect(svc.Spec.Selector).To(Equal(map[string]string{"app": "other"}))
			g.Expect(metav1.GetControllerOf(&svc)).To(BeNil())
			g.Expect(f.eventCount(operatorv1alpha1.EventNameTaken)).To(BeNumerically("==", 1))
		}, 5*time.Second).Should(Succeed())
		Expect(f.appliedOutputs(Default, 0)).To(HaveKey("metrics"), "the output itself is sent all the same")
	})

	It("runs the gNMI server: its section in the bootstrap file, its port, certificates of the server and subscriber roles, its Service and NetworkPolicy rule", func() {
		f := newFleetWith(1, func(c *operatorv1alpha1.Cluster) {
			c.Spec.API.GNMI = &operatorv1alpha1.GNMIServerSpec{Enabled: ptr.To(true)}
		})
		svc := &corev1.Service{}
		Eventually(func(g Gomega) {
			var cm corev1.ConfigMap
			g.Expect(k8sClient.Get(suiteCtx, f.key(), &cm)).To(Succeed())
			var bootstrap map[string]any
			g.Expect(yaml.Unmarshal([]byte(cm.Data[workload.ConfigFile]), &bootstrap)).To(Succeed())
			g.Expect(bootstrap).To(HaveKeyWithValue("gnmi-server", map[string]any{"address": ":57400", "tls": map[string]any{
				"ca-file": "/var/run/gnmic/gnmi-tls/ca.crt", "cert-file": "/var/run/gnmic/gnmi-tls/tls.crt",
				"key-file": "/var/run/gnmic/gnmi-tls/tls.key", "client-auth": "require-verify"}}))
			g.Expect(f.collectorPorts(g)).To(ContainElement(corev1.ContainerPort{Name: "gnmi", ContainerPort: 57400, Protocol: corev1.ProtocolTCP}))
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-gnmi"}, svc)).To(Succeed())
			var np networkingv1.NetworkPolicy
			g.Expect(k8sClient.Get(suiteCtx, f.key(), &np)).To(Succeed())
			g.Expect(np.Spec.Ingress).To(ContainElement(networkingv1.NetworkPolicyIngressRule{Ports: tcpPorts(57400)}))
		}, 10*time.Second).Should(Succeed())
		Expect(svc.Spec.Ports).To(HaveLen(1))
		Expect(svc.Spec.Ports[0].Name).To(Equal("gnmi"))
		Expect(svc.Spec.Ports[0].Port).To(Equal(int32(57400)))
		Expect(svc.Spec.Selector).To(Equal(map[string]string{operatorv1alpha1.ClusterLabel: f.name}))
		Expect(metav1.IsControlledBy(svc, f.cluster())).To(BeTrue())

		By("issuing the server's certificate from the collector server CA and a subscriber certificate from the subscriber CA, the only one the server trusts")
		var server, clientTLS, subscriberCA corev1.Secret
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-gnmi-tls"}, &server)).To(Succeed())
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-gnmi-client-tls"}, &clientTLS)).To(Succeed())
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-gnmi-ca"}, &subscriberCA)).To(Succeed())
		Expect(metav1.IsControlledBy(&subscriberCA, f.cluster())).To(BeTrue())
		serverRoots := x509.NewCertPool()
		Expect(serverRoots.AppendCertsFromPEM(clientTLS.Data["ca.crt"])).To(BeTrue())
		serverCert, err := pki.ParseCert(server.Data["tls.crt"])
		Expect(err).NotTo(HaveOccurred())
		for _, host := range []string{"fleet-gnmi." + f.ns + ".svc", "fleet-0.fleet." + f.ns + ".svc"} {
			_, err := serverCert.Verify(x509.VerifyOptions{Roots: serverRoots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			Expect(err).NotTo(HaveOccurred(), "the server certificate is valid for %s", host)
		}
		Expect(clientTLS.Data["ca.crt"]).To(Equal(f.secret(f.name + "-api-ca").Data["ca.crt"]), "subscribers verify the server with the collector server CA")
		Expect(server.Data["ca.crt"]).To(Equal(subscriberCA.Data["tls.crt"]), "the gNMI server trusts the subscriber CA alone")
		Expect(server.Data["ca.crt"]).NotTo(Equal(f.apiCA()), "the gNMI server does not trust the operator's client CA")
		subscriberRoots := x509.NewCertPool()
		Expect(subscriberRoots.AppendCertsFromPEM(server.Data["ca.crt"])).To(BeTrue())
		clientCert, err := pki.ParseCert(clientTLS.Data["tls.crt"])
		Expect(err).NotTo(HaveOccurred())
		_, err = clientCert.Verify(x509.VerifyOptions{Roots: subscriberRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		Expect(err).NotTo(HaveOccurred())

		By("refusing an output on the gNMI server's port")
		f.addScrapedOutput("on-gnmi", ":57400")
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(f.cluster().Status.Conditions, operatorv1alpha1.ConditionOutputPortsAvailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring("Output on-gnmi listens on port 57400, which the collectors' gNMI server"))
		}, 10*time.Second).Should(Succeed())

		By("deleting the Service and the section when the server is disabled")
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.API.GNMI.Enabled = ptr.To(false) })
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(svc), &corev1.Service{}))).To(BeTrue())
			var cm corev1.ConfigMap
			g.Expect(k8sClient.Get(suiteCtx, f.key(), &cm)).To(Succeed())
			g.Expect(cm.Data[workload.ConfigFile]).NotTo(ContainSubstring("gnmi-server"))
		}, 10*time.Second).Should(Succeed())
	})

	Context("with the ServiceMonitor CRD installed", Ordered, func() {
		BeforeAll(func() {
			installServiceMonitorCRD()
		})

		It("keeps a ServiceMonitor of the output's Service, follows its settings, and deletes it when disabled or unused", func() {
			f := newFleet(1, nil, "")
			f.addScrapedOutput("metrics", "")
			sm := serviceMonitor()
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-out-metrics"}, sm)).To(Succeed())
				c := meta.FindStatusCondition(f.cluster().Status.Conditions, operatorv1alpha1.ConditionServiceMonitors)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			}, 10*time.Second).Should(Succeed())
			Expect(metav1.IsControlledBy(sm, f.cluster())).To(BeTrue())
			Expect(sm.GetLabels()).To(HaveKeyWithValue(operatorv1alpha1.OutputServiceLabel, "fleet-out-metrics"))
			endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			Expect(endpoints).To(Equal([]any{map[string]any{"port": "prom-metrics", "path": "/metrics", "scheme": "http"}}))
			selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			var svc corev1.Service
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-out-metrics"}, &svc)).To(Succeed())
			for k, v := range selector {
				Expect(svc.Labels).To(HaveKeyWithValue(k, v), "the ServiceMonitor selects the output's Service")
			}

			By("following the interval and labels of the Output")
			f.updateOutput("metrics", func(o *operatorv1alpha1.Output) {
				o.Spec.Service = &operatorv1alpha1.OutputServiceSpec{ServiceMonitor: operatorv1alpha1.ServiceMonitorSpec{
					Interval: "15s", Labels: map[string]string{"release": "kube-prometheus-stack"}}}
			})
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(sm), sm)).To(Succeed())
				g.Expect(sm.GetLabels()).To(HaveKeyWithValue("release", "kube-prometheus-stack"))
				interval, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
				g.Expect(interval).To(Equal([]any{map[string]any{"port": "prom-metrics", "path": "/metrics", "scheme": "http", "interval": "15s"}}))
			}, 10*time.Second).Should(Succeed())

			By("restoring it after it was deleted by hand")
			Expect(k8sClient.Delete(suiteCtx, sm)).To(Succeed())
			Eventually(func() error {
				return k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(sm), serviceMonitor())
			}, 10*time.Second).Should(Succeed())

			By("deleting it, and keeping the Service, when the Output disables it")
			f.updateOutput("metrics", func(o *operatorv1alpha1.Output) { o.Spec.Service.ServiceMonitor.Enabled = ptr.To(false) })
			Eventually(func() bool {
				return apierrors.IsNotFound(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(sm), serviceMonitor()))
			}, 10*time.Second).Should(BeTrue())
			Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&svc), &corev1.Service{})).To(Succeed())
			Eventually(func() *metav1.Condition {
				return meta.FindStatusCondition(f.cluster().Status.Conditions, operatorv1alpha1.ConditionServiceMonitors)
			}, 10*time.Second).Should(BeNil(), "no output wants one")

			By("deleting both when the Cluster no longer sends to the output")
			f.updateOutput("metrics", func(o *operatorv1alpha1.Output) { o.Spec.Service.ServiceMonitor.Enabled = nil })
			Eventually(func() error { return k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(sm), serviceMonitor()) }, 10*time.Second).Should(Succeed())
			Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "scrape-metrics"}})).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(sm), serviceMonitor()))).To(BeTrue())
				g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&svc), &corev1.Service{}))).To(BeTrue())
			}, 10*time.Second).Should(Succeed())
		})
	})
})

// serviceMonitorCRDFile is prometheus-operator's ServiceMonitor CRD, vendored with its version
// (test/thirdparty/prometheus-operator/README.md).
func serviceMonitorCRDFile() string {
	return filepath.Join(testenv.RepoRoot(), "test", "thirdparty", "prometheus-operator", "monitoring.coreos.com_servicemonitors.yaml")
}

// installServiceMonitorCRD installs the ServiceMonitor CRD into the suite's API server until the end of the
// current container.
func installServiceMonitorCRD() {
	opts := envtest.CRDInstallOptions{Paths: []string{serviceMonitorCRDFile()}}
	crds, err := envtest.InstallCRDs(cfg, opts)
	Expect(err).NotTo(HaveOccurred())
	Expect(crds).To(HaveLen(1))
	DeferCleanup(func() {
		Expect(envtest.UninstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crds[0]}})).To(Succeed())
	})
}

func serviceMonitor() *unstructured.Unstructured {
	sm := &unstructured.Unstructured{}
	sm.SetGroupVersionKind(workload.ServiceMonitorGVK)
	return sm
}

// collectorPorts are the container ports of the collector container of the fleet's StatefulSet.
func (f *fleet) collectorPorts(g Gomega) []corev1.ContainerPort {
	var sts appsv1.StatefulSet
	g.Expect(k8sClient.Get(suiteCtx, f.key(), &sts)).To(Succeed())
	return sts.Spec.Template.Spec.Containers[0].Ports
}

// appliedOutputs are the outputs in the configuration the pod's collector last applied.
func (f *fleet) appliedOutputs(g Gomega, ordinal int) map[string]map[string]any {
	last, ok := f.collectors[ordinal].LastApplied()
	g.Expect(ok).To(BeTrue(), "pod %d's collector applied nothing", ordinal)
	return last.Config.Outputs
}

func (f *fleet) updateOutput(name string, change func(*operatorv1alpha1.Output)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o := f.output(Default, name)
		change(o)
		return k8sClient.Update(suiteCtx, o)
	})).To(Succeed())
}

// apiCA is the CA of the Cluster's collector API, as its serving Secret carries it.
func (f *fleet) apiCA() []byte {
	var s corev1.Secret
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-api-tls"}, &s)).To(Succeed())
	return s.Data["ca.crt"]
}
