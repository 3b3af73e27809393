//go:build e2e

package e2e_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// Dial-in devices: the collectors run gNMIc's tunnel server (spec.grpcTunnel) and a TunnelTargetPolicy makes
// them collect the devices that register over it. Each device dials one collector pod directly, with the
// device certificate the operator keeps (<cluster>-tunnel-client-tls), as a LoadBalancer would hand its tunnel
// to one pod; it registers with the real grpctunnel client. The operator runs as shipped.
var _ = Describe("Dial-in devices through the gRPC tunnel", Ordered, func() {
	fleet := harness.Fleet{Namespace: "dialin", Cluster: "telemetry", Replicas: 2, Tune: func(s *operatorv1alpha1.ClusterSpec) {
		s.GRPCTunnel = &operatorv1alpha1.GRPCTunnelSpec{Port: 57401}
	}}
	const targets = 4
	devices := map[string]string{"edge-a": "telemetry-0", "edge-b": "telemetry-1"} // device -> the pod it dials

	It("reports two devices matched by a TunnelTargetPolicy as collected on the pod their tunnel reached, and counts them", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
		Expect(k8sClient.Create(ctx, &operatorv1alpha1.TunnelTargetPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: fleet.Namespace, Name: "edges"},
			Spec: operatorv1alpha1.TunnelTargetPolicySpec{ClusterRefs: []string{fleet.Cluster},
				Match:   operatorv1alpha1.TunnelTargetMatch{Type: "^GNMI_GNOI$", ID: "^edge-"},
				Profile: "routers", SubscriptionRefs: []string{"counters"}}})).To(Succeed())
		Eventually(func(g Gomega) {
			var p operatorv1alpha1.TunnelTargetPolicy
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: "edges"}, &p)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, operatorv1alpha1.ConditionReady)).To(BeTrue())
			for pod := range collectorsByPod(fleet) {
				c, ok := collectors.Collector(fleet.Namespace, pod)
				g.Expect(ok).To(BeTrue())
				last, ok := c.LastApplied()
				g.Expect(ok).To(BeTrue())
				g.Expect(last.Config.TunnelTargetMatches).To(HaveKey("edges"), "pod %s", pod)
			}
		}).WithTimeout(time.Minute).Should(Succeed())

		By("dialling one device in to each pod with the device certificate from the Cluster's CA")
		var device corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster + "-tunnel-client-tls"}, &device)).To(Succeed())
		cert, err := tls.X509KeyPair(device.Data["tls.crt"], device.Data["tls.key"])
		Expect(err).NotTo(HaveOccurred())
		roots := x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(device.Data["ca.crt"])).To(BeTrue())
		var dialled time.Time
		for id, pod := range devices {
			var addr string
			Eventually(func() bool { var ok bool; addr, ok = collectors.TunnelAddr(fleet.Namespace, pod); return ok }).
				WithTimeout(time.Minute).Should(BeTrue(), "the tunnel server of pod %s", pod)
			d, err := fakecollector.DialIn(ctx, addr, &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots,
				ServerName: fmt.Sprintf("%s.%s.%s.svc", pod, fleet.Cluster, fleet.Namespace), MinVersion: tls.VersionTLS12}, id, "GNMI_GNOI")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(d.Close)
			dialled = time.Now()
		}

		By("reading each device on its pod in the Cluster's status, attributed to the policy")
		Eventually(func(g Gomega) {
			var c operatorv1alpha1.Cluster
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster}, &c)).To(Succeed())
			g.Expect(c.Status.TunnelTargets).To(Equal(int32(len(devices))))
			byPod := map[string][]operatorv1alpha1.TunnelTargetStatus{}
			for _, col := range c.Status.Collectors {
				byPod[col.Pod] = col.TunnelTargets
				g.Expect(col.TunnelTargetsCount).To(Equal(int32(len(col.TunnelTargets))))
			}
			for id, pod := range devices {
				g.Expect(byPod[pod]).To(ConsistOf(operatorv1alpha1.TunnelTargetStatus{
					ID: id, Type: "GNMI_GNOI", Policy: "edges", Collecting: true, State: "running"}), "pod %s", pod)
			}
			var p operatorv1alpha1.TunnelTargetPolicy
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: "edges"}, &p)).To(Succeed())
			g.Expect(p.Status.TunnelTargets).To(Equal(int32(len(devices))))
		}).WithTimeout(time.Minute).Should(Succeed())
		AddReportEntry("from the last device's registration to both devices in the Cluster's and the policy's status",
			time.Since(dialled).Round(10*time.Millisecond).String())
		for id, pod := range devices {
			runs := collectors.Runs(fleet.Namespace)
			Expect(runs[pod]).To(HaveKeyWithValue(id, true), "the collector of %s collects %s", pod, id)
			for other, otherPod := range devices {
				if otherPod != pod {
					Expect(runs[pod]).NotTo(HaveKey(other))
				}
			}
		}

		By("counting them in the operator's metrics and in gnmic_targets_present, which autoscalers read")
		Eventually(func(g Gomega) {
			lease, err := cp.OperatorLeader(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			text, err := cp.OperatorMetrics(ctx, lease.Pod)
			g.Expect(err).NotTo(HaveOccurred())
			for _, pod := range devices {
				g.Expect(text).To(ContainSubstring(fmt.Sprintf(`gnmic_collector_tunnel_targets{cluster=%q,namespace=%q,pod=%q} 1`,
					fleet.Cluster, fleet.Namespace, pod)))
			}
			g.Expect(text).To(ContainSubstring(fmt.Sprintf(`gnmic_cluster_tunnel_targets{cluster=%q,namespace=%q} 2`, fleet.Cluster, fleet.Namespace)))
			var c operatorv1alpha1.Cluster
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster}, &c)).To(Succeed())
			for _, col := range c.Status.Collectors {
				g.Expect(targetsPresent(g, fleet.Namespace, col.Pod)).To(Equal(int64(col.Targets)+1), "pod %s: its targets and its device", col.Pod)
			}
		}).WithTimeout(time.Minute).Should(Succeed())
	})
})

// collectorsByPod are the names of the fleet's collector pods.
func collectorsByPod(f harness.Fleet) map[string]bool {
	out := map[string]bool{}
	for i := range f.Replicas {
		out[f.Cluster+"-"+strconv.Itoa(int(i))] = true
	}
	return out
}

// targetsPresent is gnmic_targets_present of the pod, read through the aggregated custom metrics API as an
// autoscaler reads it.
func targetsPresent(g Gomega, namespace, pod string) int64 {
	raw, err := cp.Clientset.CoreV1().RESTClient().Get().
		AbsPath("/apis/custom.metrics.k8s.io/v1beta2/namespaces", namespace, "pods", pod, "gnmic_targets_present").DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	var list struct {
		Items []struct {
			Value string `json:"value"`
		} `json:"items"`
	}
	g.Expect(json.Unmarshal(raw, &list)).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	v, err := strconv.ParseInt(strings.TrimSuffix(list.Items[0].Value, "m"), 10, 64)
	g.Expect(err).NotTo(HaveOccurred())
	if strings.HasSuffix(list.Items[0].Value, "m") {
		v /= 1000
	}
	return v
}
