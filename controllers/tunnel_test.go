package controllers_test

import (
	"net"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/tunnelpolicy"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

var _ = Describe("Dial-in devices through the gRPC tunnel", Ordered, func() {
	BeforeAll(func() {
		op := startOperator()
		DeferCleanup(op.Stop)
		mgr := newManager(cfg)
		Expect((&tunnelpolicy.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)).To(Succeed())
		policies := runManager(mgr)
		DeferCleanup(policies.Stop)
	})

	tunnelFleet := func(replicas int, podCapacity int32) *fleet {
		return startTunedFleet(replicas, ptr.To(podCapacity), "", false, func(c *operatorv1alpha1.Cluster) {
			c.Spec.GRPCTunnel = &operatorv1alpha1.GRPCTunnelSpec{Port: 57401, Service: &operatorv1alpha1.TunnelServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, Annotations: map[string]string{"lb.example.com/scheme": "internal"},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal}}
		})
	}
	policy := func(f *fleet, name, id, profile string) *operatorv1alpha1.TunnelTargetPolicy {
		p := &operatorv1alpha1.TunnelTargetPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
			Spec: operatorv1alpha1.TunnelTargetPolicySpec{ClusterRefs: []string{f.name},
				Match:   operatorv1alpha1.TunnelTargetMatch{Type: "^GNMI_GNOI$", ID: id},
				Profile: profile, SubscriptionRefs: []string{"counters"}}}
		Expect(k8sClient.Create(suiteCtx, p)).To(Succeed())
		return p
	}
	readyOf := func(g Gomega, f *fleet, name string) *metav1.Condition {
		var p operatorv1alpha1.TunnelTargetPolicy
		g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &p)).To(Succeed())
		c := meta.FindStatusCondition(p.Status.Conditions, operatorv1alpha1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.ObservedGeneration).To(Equal(p.Generation))
		return c
	}

	It("runs the tunnel server: its bootstrap section, port, certificates of the server and device roles, Service and NetworkPolicy rule", func() {
		f := tunnelFleet(1, 10)
		svc := &corev1.Service{}
		Eventually(func(g Gomega) {
			var cm corev1.ConfigMap
			g.Expect(k8sClient.Get(suiteCtx, f.key(), &cm)).To(Succeed())
			var bootstrap map[string]any
			g.Expect(yaml.Unmarshal([]byte(cm.Data[workload.ConfigFile]), &bootstrap)).To(Succeed())
			g.Expect(bootstrap).To(HaveKeyWithValue("tunnel-server", map[string]any{"address": ":57401", "tls": map[string]any{
				"ca-file": "/var/run/gnmic/tunnel-tls/ca.crt", "cert-file": "/var/run/gnmic/tunnel-tls/tls.crt",
				"key-file": "/var/run/gnmic/tunnel-tls/tls.key", "client-auth": "require-verify"}}))
			g.Expect(f.collectorPorts(g)).To(ContainElement(corev1.ContainerPort{Name: "grpc-tunnel", ContainerPort: 57401, Protocol: corev1.ProtocolTCP}))
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-tunnel"}, svc)).To(Succeed())
			var np networkingv1.NetworkPolicy
			g.Expect(k8sClient.Get(suiteCtx, f.key(), &np)).To(Succeed())
			g.Expect(np.Spec.Ingress).To(ContainElement(networkingv1.NetworkPolicyIngressRule{Ports: tcpPorts(57401)}))
		}, 10*time.Second).Should(Succeed())
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeLoadBalancer))
		Expect(svc.Spec.ExternalTrafficPolicy).To(Equal(corev1.ServiceExternalTrafficPolicyLocal))
		Expect(svc.Annotations).To(HaveKeyWithValue("lb.example.com/scheme", "internal"))
		Expect(svc.Spec.Ports).To(HaveLen(1))
		Expect(svc.Spec.Ports[0].Port).To(Equal(int32(57401)))
		Expect(metav1.IsControlledBy(svc, f.cluster())).To(BeTrue())
		var server, device corev1.Secret
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-tunnel-tls"}, &server)).To(Succeed())
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-tunnel-client-tls"}, &device)).To(Succeed())
		var deviceCA corev1.Secret
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "fleet-tunnel-ca"}, &deviceCA)).To(Succeed())
		Expect(metav1.IsControlledBy(&deviceCA, f.cluster())).To(BeTrue())
		Expect(server.Data["ca.crt"]).To(Equal(deviceCA.Data["tls.crt"]), "the tunnel server trusts the device CA alone")
		Expect(server.Data["ca.crt"]).NotTo(Equal(f.apiCA()), "the tunnel server does not trust the operator's client CA")
		Expect(device.Data["ca.crt"]).To(Equal(f.secret(f.name + "-api-ca").Data["ca.crt"]), "devices verify the server with the collector server CA")

		By("deleting the Service and the section when spec.grpcTunnel goes")
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.GRPCTunnel = nil })
		Eventually(func(g Gomega) {
			err := k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(svc), &corev1.Service{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred())
			var cm corev1.ConfigMap
			g.Expect(k8sClient.Get(suiteCtx, f.key(), &cm)).To(Succeed())
			g.Expect(cm.Data[workload.ConfigFile]).NotTo(ContainSubstring("tunnel-server"))
		}, 10*time.Second).Should(Succeed())
	})

	It("renders a policy as a tunnel-target-match on every pod, reports the devices per pod, counts them, and places the other targets as before", func() {
		f := tunnelFleet(2, 2)
		f.addTargets(0, 4)
		before := f.converged(4, 0)
		policy(f, "leaves", "^leaf-", "routers")

		By("sending every pod the match, configured from the profile, with the policy's subscriptions")
		Eventually(func(g Gomega) {
			for o := range 2 {
				last, ok := f.collectors[o].LastApplied()
				g.Expect(ok).To(BeTrue())
				m := last.Config.TunnelTargetMatches["leaves"]
				g.Expect(m).To(HaveKeyWithValue("id", "^leaf-"))
				g.Expect(m).To(HaveKeyWithValue("type", "^GNMI_GNOI$"))
				cfg, _ := m["config"].(map[string]any)
				g.Expect(cfg).To(HaveKeyWithValue("username", "admin"))
				g.Expect(cfg).To(HaveKeyWithValue("timeout", "10s"))
				g.Expect(cfg).To(HaveKeyWithValue("subscriptions", ConsistOf("counters")))
				g.Expect(last.Config.Subscriptions).To(HaveKey("counters"))
			}
			g.Expect(readyOf(g, f, "leaves").Status).To(Equal(metav1.ConditionTrue))
		}, 15*time.Second).Should(Succeed())

		By("reporting two devices dialled in to pod 0 on that pod, attributed to the policy")
		addr, err := f.collectors[0].ServeTunnel(net.JoinHostPort(f.ip(0), "0"), nil)
		Expect(err).NotTo(HaveOccurred())
		for _, id := range []string{"leaf-1", "leaf-2"} {
			d, err := fakecollector.DialIn(suiteCtx, addr, nil, id, "GNMI_GNOI")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(d.Close)
		}
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.TunnelTargets).To(Equal(int32(2)))
			g.Expect(c.Status.Collectors).To(HaveLen(2))
			g.Expect(c.Status.Collectors[0].Pod).To(Equal("fleet-0"))
			g.Expect(c.Status.Collectors[0].TunnelTargetsCount).To(Equal(int32(2)))
			g.Expect(c.Status.Collectors[0].TunnelTargets).To(ConsistOf(
				operatorv1alpha1.TunnelTargetStatus{ID: "leaf-1", Type: "GNMI_GNOI", Policy: "leaves", Collecting: true, State: "running"},
				operatorv1alpha1.TunnelTargetStatus{ID: "leaf-2", Type: "GNMI_GNOI", Policy: "leaves", Collecting: true, State: "running"}))
			g.Expect(c.Status.Collectors[1].TunnelTargetsCount).To(BeZero())
			g.Expect(c.Status.Summary).To(ContainSubstring("2 dial-in"))
			var p operatorv1alpha1.TunnelTargetPolicy
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "leaves"}, &p)).To(Succeed())
			g.Expect(p.Status.TunnelTargets).To(Equal(int32(2)))
			g.Expect(p.Status.Clusters).To(Equal([]string{f.name}))
		}, 15*time.Second).Should(Succeed())

		By("leaving the placed targets where they were: podCapacity bounds the targets the operator places")
		placed := func() map[int][]string { // what the collectors hold, without the devices
			out := map[int][]string{}
			for o, names := range f.holdings() {
				for _, n := range names {
					if !strings.HasPrefix(n, "leaf-") {
						out[o] = append(out[o], n)
					}
				}
			}
			return out
		}
		Consistently(func(g Gomega) {
			g.Expect(placed()).To(Equal(before))
			g.Expect(f.cluster().Status.UnassignedTargets).To(BeZero())
		}, 3*time.Second).Should(Succeed())
		Expect(f.collectors[0].Targets()).To(ContainElements("leaf-1", "leaf-2"), "no apply removed the devices")

		By("dropping the devices from status when the policy goes")
		Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.TunnelTargetPolicy{ObjectMeta: metav1.ObjectMeta{Name: "leaves", Namespace: f.ns}})).To(Succeed())
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.TunnelTargets).To(BeZero())
			last, _ := f.collectors[0].LastApplied()
			g.Expect(last.Config.TunnelTargetMatches).To(BeEmpty())
		}, 15*time.Second).Should(Succeed())
		Expect(placed()).To(Equal(before))
	})

	It("says why a policy is not rendered: a match that is not a regular expression, a missing profile or Secret, no Cluster with a tunnel", func() {
		f := tunnelFleet(1, 10)
		policy(f, "bad-regex", "leaf-(", "routers")
		policy(f, "no-profile", "^leaf-", "absent")
		Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Name: "secretless", Namespace: f.ns},
			Spec: operatorv1alpha1.TargetProfileSpec{CredentialsRef: "missing-creds"}})).To(Succeed())
		policy(f, "no-secret", "^leaf-", "secretless")
		Eventually(func(g Gomega) {
			c := readyOf(g, f, "no-secret")
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonSecretNotFound))
			g.Expect(c.Message).To(ContainSubstring(`"missing-creds"`))
			c = readyOf(g, f, "bad-regex")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonInvalidMatch))
			g.Expect(c.Message).To(ContainSubstring("spec.match.id"))
			c = readyOf(g, f, "no-profile")
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonProfileNotFound))
			g.Expect(c.Message).To(ContainSubstring(`"absent"`))
		}, 15*time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			last, ok := f.collectors[0].LastApplied()
			if ok {
				g.Expect(last.Config.TunnelTargetMatches).To(BeEmpty(), "a policy that cannot be rendered is sent to no collector")
			}
		}, 2*time.Second).Should(Succeed())

		By("rendering the policy once its profile exists")
		Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Name: "absent", Namespace: f.ns}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyOf(g, f, "no-profile").Status).To(Equal(metav1.ConditionTrue))
			last, _ := f.collectors[0].LastApplied()
			g.Expect(last.Config.TunnelTargetMatches).To(HaveKey("no-profile"))
		}, 15*time.Second).Should(Succeed())

		By("saying NoClusters when the selected Cluster runs no tunnel server")
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.GRPCTunnel = nil })
		Eventually(func(g Gomega) {
			c := readyOf(g, f, "no-profile")
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonNoClusters))
			g.Expect(c.Message).To(ContainSubstring("set spec.grpcTunnel"))
		}, 15*time.Second).Should(Succeed())
	})

	It("refuses a policy that names no Cluster", func() {
		p := &operatorv1alpha1.TunnelTargetPolicy{ObjectMeta: metav1.ObjectMeta{Name: "nowhere", Namespace: "default"},
			Spec: operatorv1alpha1.TunnelTargetPolicySpec{Profile: "p", SubscriptionRefs: []string{"s"}}}
		err := k8sClient.Create(suiteCtx, p)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("set clusterRefs or clusterSelector"))
	})
})
