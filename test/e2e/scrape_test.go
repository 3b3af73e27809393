//go:build e2e

package e2e_test

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// Prometheus finds a prometheus output through its Service (and, with prometheus-operator, its ServiceMonitor);
// downstream systems find the collectors' gNMI server through its own. The operator runs as shipped, with only
// its own RBAC. The fake collector serves neither metrics nor gNMI: what is proven here is where the Services
// route (their EndpointSlices are the collector pods on the right ports) and what the collectors are told (the
// bootstrap file's gnmi-server section, the certificates they mount). The harness keeps the slices, as
// kube-controller-manager's controller would (it cannot: the pods' IPs are loopback addresses), from the
// Services' selectors and ports and the pods' labels, IPs, readiness and container ports.
var _ = Describe("Scraping the collectors and subscribing to them", Ordered, func() {
	fleet := harness.Fleet{Namespace: "scrape", Cluster: "telemetry", Replicas: 2, Tune: func(s *operatorv1alpha1.ClusterSpec) {
		s.API.GNMI = &operatorv1alpha1.GNMIServerSpec{Enabled: ptr.To(true)}
	}}
	const targets = 6

	It("routes the prometheus output's Service to every collector pod on the output's port", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		emulated, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		Expect(cp.EmulateEndpointSlices(emulated, fleet.Namespace,
			labels.SelectorFromSet(labels.Set{operatorv1alpha1.ClusterLabel: fleet.Cluster}))).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
		service := fleet.Cluster + "-out-prometheus"
		Eventually(func(g Gomega) {
			g.Expect(endpointsOf(g, fleet, service)).To(Equal(collectorEndpoints(g, fleet, "prom-prometheus", 9804)))
		}).WithTimeout(time.Minute).Should(Succeed())
	})

	It("makes no ServiceMonitor while the CRD is not installed, and says so in the Cluster's status", func() {
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(getCluster(g, fleet).Status.Conditions, operatorv1alpha1.ConditionServiceMonitors)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonServiceMonitorCRDMissing))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		_, err := cp.Clientset.Discovery().ServerResourcesForGroupVersion("monitoring.coreos.com/v1")
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the ServiceMonitor CRD is not installed: %v", err)
	})

	It("makes a ServiceMonitor of the Service once the CRD is installed, without a restart of the operator", func() {
		installed := time.Now()
		crds, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{Paths: []string{
			filepath.Join(harness.RepoRoot(), "test", "thirdparty", "prometheus-operator", "monitoring.coreos.com_servicemonitors.yaml")}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(envtest.UninstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crds[0]}})).To(Succeed())
		})
		sm := &unstructured.Unstructured{}
		sm.SetGroupVersionKind(workload.ServiceMonitorGVK)
		// The operator trusts discovery's answer for 30 s, and reconciles each Cluster at least every poll.
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster + "-out-prometheus"}, sm)).To(Succeed())
			c := meta.FindStatusCondition(getCluster(g, fleet).Status.Conditions, operatorv1alpha1.ConditionServiceMonitors)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		fmt.Fprintf(GinkgoWriter, "ServiceMonitor made %.1f s after the CRD was installed\n", time.Since(installed).Seconds())
		selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		var svc corev1.Service
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster + "-out-prometheus"}, &svc)).To(Succeed())
		for k, v := range selector {
			Expect(svc.Labels).To(HaveKeyWithValue(k, v), "the ServiceMonitor selects the output's Service")
		}
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		Expect(endpoints).To(Equal([]any{map[string]any{"port": "prom-prometheus", "path": "/metrics", "scheme": "http"}}))
	})

	It("tells the collectors to run the gNMI server with the Cluster's certificates, and routes its Service to them", func() {
		var cm corev1.ConfigMap
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster}, &cm)).To(Succeed())
		var bootstrap map[string]any
		Expect(yaml.Unmarshal([]byte(cm.Data[workload.ConfigFile]), &bootstrap)).To(Succeed())
		Expect(bootstrap).To(HaveKeyWithValue("gnmi-server", HaveKeyWithValue("address", ":57400")))
		Expect(bootstrap["gnmi-server"]).To(HaveKeyWithValue("tls", HaveKeyWithValue("client-auth", "require-verify")))
		for _, p := range collectorPods(Default, fleet) {
			Expect(p.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.Secret.SecretName", fleet.Cluster+"-gnmi-tls")), "pod %s", p.Name)
		}
		var clientTLS corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster + "-gnmi-client-tls"}, &clientTLS)).To(Succeed())
		Expect(clientTLS.Data).To(HaveKey("tls.crt"))
		Eventually(func(g Gomega) {
			g.Expect(endpointsOf(g, fleet, fleet.Cluster+"-gnmi")).To(Equal(collectorEndpoints(g, fleet, "gnmi", 57400)))
		}).WithTimeout(time.Minute).Should(Succeed())
	})
})

// endpoint is one ready address of a Service's EndpointSlices, on one port.
type endpoint struct {
	IP, Port string
}

// endpointsOf are the ready endpoints of the Service's EndpointSlices, sorted.
func endpointsOf(g Gomega, f harness.Fleet, service string) []endpoint {
	list, err := cp.Clientset.DiscoveryV1().EndpointSlices(f.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	g.Expect(err).NotTo(HaveOccurred())
	var out []endpoint
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				for _, p := range s.Ports {
					out = append(out, endpoint{IP: a, Port: fmt.Sprintf("%s/%d", ptr.Deref(p.Name, ""), ptr.Deref(p.Port, 0))})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b endpoint) int { return cmp.Or(cmp.Compare(a.IP, b.IP), cmp.Compare(a.Port, b.Port)) })
	return out
}

// collectorEndpoints are the fleet's collector pods, every one Ready, on the named port, sorted.
func collectorEndpoints(g Gomega, f harness.Fleet, portName string, port int32) []endpoint {
	var out []endpoint
	pods := collectorPods(g, f)
	g.Expect(pods).To(HaveLen(int(f.Replicas)))
	for _, p := range pods {
		g.Expect(podReady(&p)).To(BeTrue(), "pod %s", p.Name)
		g.Expect(p.Status.PodIP).NotTo(BeEmpty())
		out = append(out, endpoint{IP: p.Status.PodIP, Port: fmt.Sprintf("%s/%d", portName, port)})
	}
	slices.SortFunc(out, func(a, b endpoint) int { return cmp.Compare(a.IP, b.IP) })
	return out
}
