package targetsource_test

import (
	"net/http"
	"os"

	consul "github.com/hashicorp/consul/api"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/consulagent"
)

// A real Consul agent (consul agent -dev, with ACLs and HTTPS asking for a client certificate): `make
// test-consul` runs these specs; without $CONSUL they skip.
var _ = Describe("A TargetSource over Consul's catalog", Ordered, func() {
	var (
		r      *replica
		ns     string
		agent  *consulagent.Agent
		admin  *consul.Client
		ts     *operatorv1alpha1.TargetSource
		before map[string]int
	)
	registerDevice := func(node, address string, meta map[string]string, service *consul.AgentService) {
		_, err := admin.Catalog().Register(&consul.CatalogRegistration{Node: node, Address: address, NodeMeta: meta, Service: service}, nil)
		Expect(err).NotTo(HaveOccurred())
	}
	setToken := func(token string) {
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var s corev1.Secret
			if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "consul-token"}, &s); err != nil {
				return err
			}
			s.Data = map[string][]byte{"token": []byte(token + "\n")}
			return k8sClient.Update(suiteCtx, &s)
		})).To(Succeed())
	}

	BeforeAll(func() {
		binary, ok := consulagent.Binary()
		if !ok {
			Skip(consulagent.BinaryEnv + " is not set: `make test-consul` builds consul (hack/consul.sh) and runs these specs with it")
		}
		dir, err := os.MkdirTemp("", "consul-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, dir)
		agent, err = consulagent.Start(suiteCtx, binary, dir)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(agent.Stop)
		admin = agent.ManagementClient()

		r = startReplica()
		DeferCleanup(r.Stop)
		ns = newNamespace()
		token, err := agent.CreateToken(suiteCtx, "gnmic-operator", `service "gnmi" { policy = "read" }
node_prefix "" { policy = "read" }`)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "consul-token"},
			Data: map[string][]byte{"token": []byte(token + "\n")}})).To(Succeed())
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "consul-client"},
			Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: agent.Client.CertPEM, corev1.TLSPrivateKeyKey: agent.Client.KeyPEM}})).To(Succeed())
		Expect(k8sClient.Create(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "consul-ca"},
			Data: map[string]string{"ca.crt": string(agent.CA.CertPEM)}})).To(Succeed())

		registerDevice("leaf1", "10.0.0.1", map[string]string{"site": "ams1", "rack": "r1"},
			&consul.AgentService{Service: "gnmi", Port: 57400, Tags: []string{"gnmi"}, Meta: map[string]string{"gnmic_profile": "srl"}})
		registerDevice("leaf2", "10.0.0.2", map[string]string{"site": "ams1"},
			&consul.AgentService{Service: "gnmi", Address: "10.1.0.2", Port: 6030, Tags: []string{"gnmi"}})
		registerDevice("spine1", "10.0.0.3", map[string]string{"site": "ams2"},
			&consul.AgentService{Service: "gnmi", Tags: []string{"gnmi"}})
		registerDevice("lab1", "10.0.0.9", nil, &consul.AgentService{Service: "gnmi", Port: 57400, Tags: []string{"lab"}})
	})
	BeforeEach(func() { before = r.writes.of(ns) })

	It("creates a Target per instance, through HTTPS with a client certificate and an ACL token from Secrets", func() {
		ts = &operatorv1alpha1.TargetSource{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "consul"},
			Spec: operatorv1alpha1.TargetSourceSpec{
				Consul: &operatorv1alpha1.ConsulInventory{
					Address:        "https://" + agent.HTTPSAddress,
					Services:       []string{"gnmi"},
					Tags:           []string{"gnmi"},
					NodeMetaLabels: []string{"site"},
					TokenSecretRef: &operatorv1alpha1.SecretKeyReference{Name: "consul-token", Key: "token"},
					TLS: &operatorv1alpha1.ConsulTLS{
						CARef:                &operatorv1alpha1.CABundleReference{ConfigMapKeyRef: &operatorv1alpha1.ConfigMapKeyReference{Name: "consul-ca", Key: "ca.crt"}},
						ClientCertSecretName: "consul-client",
					},
					Interval: &metav1.Duration{Duration: 3600e9},
				},
				Mapping: operatorv1alpha1.TargetMapping{Preset: operatorv1alpha1.MappingPresetConsul, AllowedProfiles: []string{"srl"},
					Defaults: operatorv1alpha1.TargetDefaults{Profile: "routers", Port: 57400, Labels: map[string]string{"source": "consul"}}},
				Sync: operatorv1alpha1.TargetSync{DeleteAfterMisses: 1, MinRecordsPercent: ptr.To[int32](50), BatchSize: 200},
			},
		}
		Expect(k8sClient.Create(suiteCtx, ts)).To(Succeed())
		ts = waitForSyncs(ts, 1)

		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(ts.Status.Provider).To(Equal("consul"))
		Expect(ts.Status.Records).To(BeEquivalentTo(3), "lab1 lacks the tag gnmi")
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodPost: 3}))
		all := targets(ns)
		Expect(all).To(HaveLen(3))
		type target struct{ Address, Profile, Site string }
		got := map[string]target{}
		for name, t := range all {
			got[name] = target{t.Spec.Address, t.Spec.Profile, t.Labels["site"]}
			Expect(t.Labels).To(HaveKeyWithValue(operatorv1alpha1.TargetSourceLabel, "consul"))
			Expect(t.Labels).To(HaveKeyWithValue("source", "consul"))
			Expect(metav1.GetControllerOf(&t)).To(HaveField("UID", ts.UID))
		}
		Expect(got).To(Equal(map[string]target{
			"leaf1":  {"10.0.0.1:57400", "srl", "ams1"},
			"leaf2":  {"10.1.0.2:6030", "routers", "ams1"},
			"spine1": {"10.0.0.3:57400", "routers", "ams2"},
		}))
	})

	It("writes nothing when the catalog has not moved", func() {
		ts = requestSync(ts)
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(writesSince(r, ns, before)).To(BeEmpty())
	})

	It("updates the Target of a node whose metadata changed, and only it", func() {
		registerDevice("leaf2", "10.0.0.2", map[string]string{"site": "ams3"},
			&consul.AgentService{Service: "gnmi", Address: "10.1.0.2", Port: 6030, Tags: []string{"gnmi"}})
		ts = requestSync(ts)
		Expect(ts.Status.TargetsUpdated).To(BeEquivalentTo(1))
		Expect(writesSince(r, ns, before)).To(HaveLen(1), "one kind of write: the update of leaf2")
		Expect(targets(ns)["leaf2"].Labels).To(HaveKeyWithValue("site", "ams3"))
	})

	It("deletes the Target of a node that left, after sync.deleteAfterMisses", func() {
		_, err := admin.Catalog().Deregister(&consul.CatalogDeregistration{Node: "spine1"}, nil)
		Expect(err).NotTo(HaveOccurred())
		ts = requestSync(ts)
		Expect(ts.Status.TargetsDeleted).To(BeEquivalentTo(1))
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodDelete: 1}))
		Expect(targets(ns)).To(SatisfyAll(HaveLen(2), HaveKey("leaf1"), HaveKey("leaf2")))
	})

	It("changes nothing when Consul refuses the token, and says why", func() {
		setToken("00000000-0000-4000-8000-000000000000")
		ts = requestSync(ts)
		Expect(writesSince(r, ns, before)).To(BeEmpty())
		Expect(condition(ts, operatorv1alpha1.ConditionSynced)).To(HaveField("Reason", operatorv1alpha1.ReasonFetchFailed))
		Expect(condition(ts, operatorv1alpha1.ConditionInventoryReachable)).To(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Message", ContainSubstring("ACL not found"))))
	})

	It("changes nothing when Consul leaves instances out for the token's lack of rights, and says so", func() {
		token, err := agent.CreateToken(suiteCtx, "nodes-only", `node_prefix "" { policy = "read" }`)
		Expect(err).NotTo(HaveOccurred())
		setToken(token)
		ts = requestSync(ts)
		Expect(writesSince(r, ns, before)).To(BeEmpty())
		Expect(condition(ts, operatorv1alpha1.ConditionSynced)).To(HaveField("Reason", operatorv1alpha1.ReasonFetchFailed))
		Expect(condition(ts, operatorv1alpha1.ConditionInventoryReachable).Message).To(ContainSubstring("the token may not read every instance of service gnmi"))
		Expect(targets(ns)).To(HaveLen(2))
	})

	It("keeps the Targets when, without a token, Consul answers as if the service were empty", func() {
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := source(Default, ts)
			got.Spec.Consul.TokenSecretRef = nil
			return k8sClient.Update(suiteCtx, got)
		})).To(Succeed())
		ts = requestSync(ts)
		Expect(writesSince(r, ns, before)).To(BeEmpty())
		Expect(condition(ts, operatorv1alpha1.ConditionSynced)).To(HaveField("Reason", operatorv1alpha1.ReasonTruncated), "%+v", ts.Status.Conditions)
		Expect(condition(ts, operatorv1alpha1.ConditionTruncated).Status).To(Equal(metav1.ConditionTrue))
		Expect(targets(ns)).To(HaveLen(2))
	})
})
