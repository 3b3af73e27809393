package controllers_test

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// operatorNamespace is where the specs below say the operator runs, as POD_NAMESPACE tells it in a pod.
const operatorNamespace = "gnmic-system"

var _ = Describe("Secure by default", func() {
	var op *operator
	AfterEach(func() { op.Stop() })

	Context("the collector API", func() {
		BeforeEach(func() { op = startOperator() })

		It("serves a Cluster that says nothing about TLS over mutual TLS, and its collectors refuse plain HTTP and other CAs", func() {
			f := newFleet(2, nil, "")
			f.addTargets(0, 4)
			f.converged(4, 0)

			var cm corev1.ConfigMap
			Expect(k8sClient.Get(suiteCtx, f.key(), &cm)).To(Succeed())
			var bootstrap map[string]any
			Expect(yaml.Unmarshal([]byte(cm.Data["gnmic.yaml"]), &bootstrap)).To(Succeed())
			Expect(bootstrap["api-server"]).To(HaveKeyWithValue("tls", HaveKeyWithValue("client-auth", "require-verify")))
			var sts appsv1.StatefulSet
			Expect(k8sClient.Get(suiteCtx, f.key(), &sts)).To(Succeed())
			Expect(sts.Spec.Template.Annotations).To(HaveKey(credentials.APITLSChecksumAnnotation))
			Eventually(func(g Gomega) {
				c := f.cluster()
				cond := meta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionAPISecured)
				g.Expect(cond).NotTo(BeNil())
				g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonMutualTLS))
			}, 10*time.Second).Should(Succeed())

			other, err := fakecollector.NewPKI()
			Expect(err).NotTo(HaveOccurred())
			// It presents its certificate whatever CAs the collector asks for: crypto/tls by itself would send none.
			foreign := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
				InsecureSkipVerify: true, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
					return &other.Client, nil
				}}}}
			for o, col := range f.collectors {
				Expect(col.URL()).To(HavePrefix("https://"))
				Expect(col.ApplyCount()).To(BeNumerically(">", 0), "collector %d was pushed to", o)
				plain := "http://" + strings.TrimPrefix(col.URL(), "https://")
				if resp, err := http.Get(plain + "/api/v1/targets"); err == nil {
					Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "a plain-HTTP client got an answer")
					resp.Body.Close()
				}
				_, err := foreign.Get(col.URL() + "/api/v1/targets")
				Expect(err).To(HaveOccurred(), "a client with another CA's certificate got through")
				resp, err := f.operatorHTTPClient(o).Get(col.URL() + "/api/v1/targets")
				Expect(err).NotTo(HaveOccurred(), "the operator's own certificate is refused")
				resp.Body.Close()
			}
		})

		It("refuses an opt-out without a reason", func() {
			c := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "no-reason", Namespace: "default"},
				Spec: operatorv1alpha1.ClusterSpec{Image: "ghcr.io/openconfig/gnmic:test",
					API: operatorv1alpha1.APISpec{Insecure: &operatorv1alpha1.APIInsecure{Reason: "  "}}}}
			err := k8sClient.Create(suiteCtx, c)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring("insecure.reason must say why"))
			c.Spec.API.Insecure.Reason = ""
			Expect(apierrors.IsInvalid(k8sClient.Create(suiteCtx, c))).To(BeTrue())
		})

		It("serves plain HTTP to a Cluster that opts out, says why in its condition and warns once", func() {
			const reason = "lab fleet on an isolated network"
			f := newFleetWith(1, func(c *operatorv1alpha1.Cluster) {
				c.Spec.API.Insecure = &operatorv1alpha1.APIInsecure{Reason: reason}
			})
			f.addTargets(0, 2)
			f.converged(2, 0)
			Expect(f.collectors[0].URL()).To(HavePrefix("http://"))
			Eventually(func(g Gomega) {
				cond := meta.FindStatusCondition(f.cluster().Status.Conditions, operatorv1alpha1.ConditionAPISecured)
				g.Expect(cond).NotTo(BeNil())
				g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonOptedOut))
				g.Expect(cond.Message).To(ContainSubstring(reason))
			}, 10*time.Second).Should(Succeed())
			Eventually(func() int32 { return f.eventCount(operatorv1alpha1.EventAPIInsecure) }, 10*time.Second).Should(BeEquivalentTo(1))
			// The operator polls every 2 s: the Cluster is reconciled again and again, and warns no more.
			Consistently(func() int32 { return f.eventCount(operatorv1alpha1.EventAPIInsecure) }, 5*time.Second, 500*time.Millisecond).
				Should(BeEquivalentTo(1))
			Expect(f.events(operatorv1alpha1.EventAPIInsecure)).To(ConsistOf(ContainSubstring(reason)))
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-api-tls"}, &corev1.Secret{})).
				To(Satisfy(apierrors.IsNotFound), "a Cluster without TLS gets no certificate")
		})
	})

	Context("the NetworkPolicy of a Cluster", func() {
		BeforeEach(func() {
			op = startOperatorPolling(2*time.Second, func(r *cluster.Reconciler) { r.OperatorNamespace = operatorNamespace })
		})

		It("admits only the operator's pods to the REST API and anyone to the outputs' listening ports, and is restored after an edit", func() {
			f := newFleet(1, nil, "")
			f.addScrapedOutput("prom", ":9273")
			f.addTargets(0, 2)
			f.converged(2, 0)
			fromOperator := networkingv1.NetworkPolicyPeer{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": operatorNamespace}},
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					"control-plane": "controller-manager", "app.kubernetes.io/name": "gnmic-operator"}},
			}
			want := []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{fromOperator}, Ports: tcpPorts(int32(f.port))},
				{Ports: tcpPorts(9273)},
			}
			np := &networkingv1.NetworkPolicy{}
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(suiteCtx, f.key(), np)).To(Succeed())
				g.Expect(np.Spec.Ingress).To(Equal(want))
			}, 10*time.Second).Should(Succeed())
			Expect(np.Spec.PodSelector.MatchLabels).To(Equal(map[string]string{operatorv1alpha1.ClusterLabel: f.name}))
			Expect(np.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}))
			Expect(metav1.IsControlledBy(np, f.cluster())).To(BeTrue(), "the Cluster owns its NetworkPolicy")

			By("restoring the policy after someone opened the REST API to everyone")
			f.editOwned(np, func() { np.Spec.Ingress[0].From = nil })
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(suiteCtx, f.key(), np)).To(Succeed())
				g.Expect(np.Spec.Ingress).To(Equal(want))
			}, 10*time.Second).Should(Succeed())

			By("admitting only outputPeers to the outputs' ports once the spec names them")
			monitoring := networkingv1.NetworkPolicyPeer{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}
			f.updateCluster(func(c *operatorv1alpha1.Cluster) {
				c.Spec.NetworkPolicy.OutputPeers = []networkingv1.NetworkPolicyPeer{monitoring}
			})
			want[1].From = []networkingv1.NetworkPolicyPeer{monitoring}
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(suiteCtx, f.key(), np)).To(Succeed())
				g.Expect(np.Spec.Ingress).To(Equal(want))
			}, 10*time.Second).Should(Succeed())

			By("deleting the policy when the Cluster disables it")
			f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.NetworkPolicy.Enabled = ptr.To(false) })
			Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(suiteCtx, f.key(), np)) }, 10*time.Second).Should(BeTrue())
		})
	})

	Context("configuration fingerprints in status", func() {
		BeforeEach(func() { op = startOperator() })

		It("are keyed per Cluster: equal configurations show different fingerprints, none the plain SHA-256", func() {
			a, b := newFleet(1, nil, ""), newFleet(1, nil, "")
			for _, f := range []*fleet{a, b} {
				f.addTargets(0, 3)
				f.converged(3, 0)
			}
			plainA, plainB := a.plainHashOfCollector(0), b.plainHashOfCollector(0)
			Expect(plainA).To(Equal(plainB), "both collectors hold the same configuration")
			hashA, hashB := a.cluster().Status.Collectors[0].ConfigHash, b.cluster().Status.Collectors[0].ConfigHash
			Expect(hashA).NotTo(Equal(plainA), "status shows a hash anyone can recompute from a guessed password")
			Expect(hashB).NotTo(Equal(plainB))
			Expect(hashA).NotTo(Equal(hashB), "equal configurations of two Clusters show equal fingerprints")
			for _, f := range []*fleet{a, b} {
				own := f.secret(f.name + "-api-ca")
				Expect(own.Data["fingerprint.key"]).To(HaveLen(32), "the key is kept in the operator's own Secret")
				Expect(metav1.IsControlledBy(own, f.cluster())).To(BeTrue())
			}
		})
	})

	Context("Outputs and Inputs with values from Secrets", func() {
		// The collectors are read once an hour: only the Secret's watch can bring a rotated value.
		BeforeEach(func() { op = startOperatorPolling(time.Hour) })

		It("sends the Secret's value to the collectors, pushes a rotated one, and reports a missing one", func() {
			const first, rotated = "kafka-Pw-first-never-logged", "kafka-Pw-rotated-never-logged"
			f := newFleet(1, nil, "")
			Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bus-creds", Namespace: f.ns},
				StringData: map[string]string{"password": first}})).To(Succeed())
			f.addBusWithSecrets("bus-creds")
			f.addTargets(0, 2)
			f.converged(2, 0)
			sentPasswords := func(g Gomega) (output, input any) {
				last, ok := f.collectors[0].LastApplied()
				g.Expect(ok).To(BeTrue())
				g.Expect(last.Config.Outputs).To(HaveKey("kafka"))
				g.Expect(last.Config.Inputs).To(HaveKey("bus"))
				sasl, _ := last.Config.Outputs["kafka"]["sasl"].(map[string]any)
				return sasl["password"], last.Config.Inputs["bus"]["password"]
			}
			Eventually(func(g Gomega) {
				output, input := sentPasswords(g)
				g.Expect(output).To(Equal(first))
				g.Expect(input).To(Equal(first))
				g.Expect(f.secretsResolved(g, "Output", "kafka").Status).To(Equal(metav1.ConditionTrue))
			}, 10*time.Second).Should(Succeed())

			By("pushing a rotated Secret")
			creds := f.secret("bus-creds")
			creds.Data["password"] = []byte(rotated)
			Expect(k8sClient.Update(suiteCtx, creds)).To(Succeed())
			Eventually(func(g Gomega) {
				output, input := sentPasswords(g)
				g.Expect(output).To(Equal(rotated))
				g.Expect(input).To(Equal(rotated))
			}, 10*time.Second).Should(Succeed())

			By("leaving out the Output and Input of a deleted Secret, and saying so")
			Expect(k8sClient.Delete(suiteCtx, creds)).To(Succeed())
			Eventually(func(g Gomega) {
				last, ok := f.collectors[0].LastApplied()
				g.Expect(ok).To(BeTrue())
				g.Expect(last.Config.Outputs).NotTo(HaveKey("kafka"))
				g.Expect(last.Config.Inputs).NotTo(HaveKey("bus"))
				g.Expect(last.Config.Targets).To(HaveLen(2), "targets that do not send to the Output are collected as before")
				for _, kind := range []string{"Output", "Input"} {
					cond := f.secretsResolved(g, kind, map[string]string{"Output": "kafka", "Input": "bus"}[kind])
					g.Expect(cond.Status).To(Equal(metav1.ConditionFalse), kind)
					g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonSecretNotFound), kind)
					g.Expect(cond.Message).To(ContainSubstring(`secret "bus-creds"`), kind)
				}
				g.Expect(f.events(operatorv1alpha1.EventTargetsSkipped)).To(ContainElement(ContainSubstring(`output "kafka"`)))
			}, 10*time.Second).Should(Succeed())
			f.converged(2, 0)

			Expect(logs.String()).NotTo(ContainSubstring(first))
			Expect(logs.String()).NotTo(ContainSubstring(rotated))
			for _, list := range []client.ObjectList{&corev1.EventList{}, &operatorv1alpha1.ClusterList{}, &operatorv1alpha1.OutputList{},
				&operatorv1alpha1.InputList{}, &corev1.ConfigMapList{}} {
				Expect(k8sClient.List(suiteCtx, list, client.InNamespace(f.ns))).To(Succeed())
				Expect(dump(list)).NotTo(ContainSubstring(first))
				Expect(dump(list)).NotTo(ContainSubstring(rotated))
			}
		})
	})
})

func tcpPorts(ports ...int32) []networkingv1.NetworkPolicyPort {
	var out []networkingv1.NetworkPolicyPort
	for _, p := range ports {
		out = append(out, networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(p))})
	}
	return out
}

// addScrapedOutput adds a prometheus Output listening on listen, selected by a Pipeline of its own.
func (f *fleet) addScrapedOutput(name, listen string) {
	raw, err := json.Marshal(listen)
	Expect(err).NotTo(HaveOccurred())
	for _, o := range []client.Object{
		&operatorv1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Spec: operatorv1alpha1.OutputSpec{
			Type: "prometheus", Config: map[string]apiextensionsv1.JSON{"listen": {Raw: raw}}}},
		&operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "scrape-" + name, Namespace: f.ns}, Spec: operatorv1alpha1.PipelineSpec{
			ClusterRef: f.name, Outputs: &operatorv1alpha1.OutputSelection{OutputRefs: []string{name}}}},
	} {
		Expect(k8sClient.Create(suiteCtx, o)).To(Succeed())
	}
}

// addBusWithSecrets adds a kafka Output and a nats Input feeding it, both with their password from the Secret,
// selected by a Pipeline of their own (the fleet's targets do not send to them).
func (f *fleet) addBusWithSecrets(secret string) {
	ref := func(key string) []operatorv1alpha1.ConfigSecretRef {
		return []operatorv1alpha1.ConfigSecretRef{{Key: key, SecretKeyRef: operatorv1alpha1.SecretKeyReference{Name: secret, Key: "password"}}}
	}
	for _, o := range []client.Object{
		&operatorv1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Name: "kafka", Namespace: f.ns}, Spec: operatorv1alpha1.OutputSpec{
			Type: "kafka", Config: map[string]apiextensionsv1.JSON{"address": {Raw: []byte(`"kafka:9092"`)}, "sasl": {Raw: []byte(`{"user":"telemetry"}`)}},
			SecretRefs: ref("sasl.password")}},
		&operatorv1alpha1.Input{ObjectMeta: metav1.ObjectMeta{Name: "bus", Namespace: f.ns}, Spec: operatorv1alpha1.InputSpec{
			Type: "nats", Config: map[string]apiextensionsv1.JSON{"address": {Raw: []byte(`"nats:4222"`)}}, SecretRefs: ref("password")}},
		&operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "bus", Namespace: f.ns}, Spec: operatorv1alpha1.PipelineSpec{
			ClusterRef: f.name, Outputs: &operatorv1alpha1.OutputSelection{OutputRefs: []string{"kafka"}},
			Inputs: &operatorv1alpha1.InputSelection{InputRefs: []string{"bus"}}}},
	} {
		Expect(k8sClient.Create(suiteCtx, o)).To(Succeed())
	}
}

// secretsResolved is the SecretsResolved condition of the fleet's Output or Input.
func (f *fleet) secretsResolved(g Gomega, kind, name string) metav1.Condition {
	var conditions []metav1.Condition
	key := client.ObjectKey{Namespace: f.ns, Name: name}
	if kind == "Output" {
		var o operatorv1alpha1.Output
		g.Expect(k8sClient.Get(suiteCtx, key, &o)).To(Succeed())
		conditions = o.Status.Conditions
	} else {
		var in operatorv1alpha1.Input
		g.Expect(k8sClient.Get(suiteCtx, key, &in)).To(Succeed())
		conditions = in.Status.Conditions
	}
	cond := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionSecretsResolved)
	g.Expect(cond).NotTo(BeNil(), "%s %s has no SecretsResolved condition", kind, name)
	return *cond
}

func (f *fleet) updateCluster(change func(*operatorv1alpha1.Cluster)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := f.cluster()
		change(c)
		return k8sClient.Update(suiteCtx, c)
	})).To(Succeed())
}

// eventCount is how often the Cluster was given an event with the reason, counting repeats the recorder
// folded into one Event.
func (f *fleet) eventCount(reason string) int32 {
	var list corev1.EventList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	var n int32
	for _, e := range list.Items {
		if e.Reason == reason && e.InvolvedObject.Name == f.name {
			n += max(e.Count, 1)
		}
	}
	return n
}

// plainHashOfCollector is the plain SHA-256 fingerprint (gnmic.Config.Hash) of what the pod's collector holds:
// what anyone could compute from a guess of the configuration, passwords included.
func (f *fleet) plainHashOfCollector(ordinal int) string {
	last, ok := f.collectors[ordinal].LastApplied()
	Expect(ok).To(BeTrue())
	raw, err := json.Marshal(map[string]any{"targets": last.Config.Targets, "subscriptions": last.Config.Subscriptions,
		"outputs": last.Config.Outputs, "inputs": last.Config.Inputs, "processors": last.Config.Processors})
	Expect(err).NotTo(HaveOccurred())
	var cfg gnmic.Config
	Expect(json.Unmarshal(raw, &cfg)).To(Succeed())
	hash, err := cfg.Hash()
	Expect(err).NotTo(HaveOccurred())
	return hash
}
