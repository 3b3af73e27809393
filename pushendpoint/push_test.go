package pushendpoint_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
	"github.com/gnmic-operator/gnmic-operator/pushendpoint"
)

// pushSource is a namespace with a Secret and a push TargetSource authenticated by it.
type pushSource struct {
	ns, name string
	secret   string
	ts       *operatorv1alpha1.TargetSource
}

var sourceCount int

// newPushSource makes a namespace, the Secret push-auth with key secret, and a TargetSource posting to it with
// a bearer token (hmac false) or an HMAC signature. Its Targets get the profile routers; a device missing from
// one sync loses its Target.
func newPushSource(hmac bool) *pushSource {
	GinkgoHelper()
	sourceCount++
	s := &pushSource{ns: fmt.Sprintf("push-%d", sourceCount), name: "inventory", secret: "s3cret-" + fmt.Sprint(sourceCount)}
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}})).To(Succeed())
	// The trailing newline of a Secret made from a file is not part of the secret.
	Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "push-auth"},
		Data: map[string][]byte{"secret": []byte(s.secret + "\n")}})).To(Succeed())
	ref := &operatorv1alpha1.SecretKeyReference{Name: "push-auth", Key: "secret"}
	auth := operatorv1alpha1.PushAuth{BearerTokenRef: ref}
	if hmac {
		auth = operatorv1alpha1.PushAuth{HMACSecretRef: ref}
	}
	s.ts = &operatorv1alpha1.TargetSource{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.name},
		Spec: operatorv1alpha1.TargetSourceSpec{
			Push:    &operatorv1alpha1.PushInventory{Auth: auth},
			Mapping: operatorv1alpha1.TargetMapping{Defaults: operatorv1alpha1.TargetDefaults{Profile: "routers"}},
			Sync:    operatorv1alpha1.TargetSync{DeleteAfterMisses: 1},
		}}
	Expect(k8sClient.Create(ctx, s.ts)).To(Succeed())
	Eventually(func(g Gomega) {
		code, _ := post(replicas[0], s.path(), "[]", nil)
		g.Expect(code).To(Equal(401), "both replicas' caches hold the TargetSource")
		code, _ = post(replicas[1], s.path(), "[]", nil)
		g.Expect(code).To(Equal(401))
	}).Should(Succeed())
	return s
}

func (s *pushSource) path() string { return "/targetsources/" + s.ns + "/" + s.name }

func (s *pushSource) bearer() map[string]string {
	return map[string]string{"Authorization": "Bearer " + s.secret}
}

func (s *pushSource) signature(body string) map[string]string {
	return map[string]string{push.SignatureHeader: push.SignatureHeaderValue([]byte(s.secret), []byte(body))}
}

func (s *pushSource) configMap() (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	err := k8sClient.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: pushendpoint.ConfigMapName(s.name)}, cm)
	return cm, err
}

// names fetches the stored snapshot as the controller of the replica that syncs the TargetSource does.
func names(snap inventory.Snapshot) []string {
	var out []string
	for _, r := range snap.Records {
		out = append(out, fmt.Sprint(r["name"]))
	}
	return out
}

func devices(names ...string) string {
	var records []string
	for _, n := range names {
		records = append(records, fmt.Sprintf(`{"name":%q,"address":"10.0.0.1"}`, n))
	}
	return "[" + strings.Join(records, ",") + "]"
}

// targets are the Targets of the namespace, name to address.
func targets(g Gomega, ns string) map[string]string {
	var list operatorv1alpha1.TargetList
	g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	out := map[string]string{}
	for _, t := range list.Items {
		out[t.Name] = t.Spec.Address
	}
	return out
}

var _ = Describe("The TargetSource push endpoint", func() {
	It("applies an authenticated snapshot, posted to a replica that does not sync, as Targets; then a delta", func() {
		s := newPushSource(false)
		Eventually(func(g Gomega) {
			ts := &operatorv1alpha1.TargetSource{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name}, ts)).To(Succeed())
			synced := meta.FindStatusCondition(ts.Status.Conditions, operatorv1alpha1.ConditionSynced)
			g.Expect(synced).NotTo(BeNil())
			g.Expect(synced.Reason).To(Equal(operatorv1alpha1.ReasonNoSnapshotYet))
		}).Should(Succeed(), "before the first post the TargetSource waits for one")

		posted := time.Now()
		code, answer := post(replicas[1], s.path(), devices("r1", "r2", "r3"), s.bearer())
		Expect(code).To(Equal(200), answer)
		// The interval of a push TargetSource is 5 minutes: only the post's sync request can sync it this soon.
		Eventually(func(g Gomega) {
			g.Expect(targets(g, s.ns)).To(Equal(map[string]string{"r1": "10.0.0.1:57400", "r2": "10.0.0.1:57400", "r3": "10.0.0.1:57400"}))
		}).Should(Succeed())
		AddReportEntry("post to Targets", time.Since(posted).String())

		code, answer = post(replicas[1], s.path()+"/delta",
			`{"upsert":[{"name":"r4","address":"10.0.0.4"},{"name":"r1","address":"10.0.0.9"}],"delete":["r2"]}`, s.bearer())
		Expect(code).To(Equal(200), answer)
		Eventually(func(g Gomega) {
			g.Expect(targets(g, s.ns)).To(Equal(map[string]string{"r1": "10.0.0.9:57400", "r3": "10.0.0.1:57400", "r4": "10.0.0.4:57400"}))
		}).Should(Succeed())
		ts := &operatorv1alpha1.TargetSource{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name}, ts)).To(Succeed())
		Expect(ts.Status.Records).To(BeEquivalentTo(3))
		Expect(ts.Status.Provider).To(Equal("push"))
	})

	It("refuses unauthenticated posts and stores nothing", func() {
		s := newPushSource(false)
		for _, header := range []map[string]string{
			nil,
			{"Authorization": "Bearer wrong"},
			{"Authorization": "Basic " + s.secret},
			s.signature(devices("r1")),
		} {
			code, answer := post(replicas[0], s.path(), devices("r1"), header)
			Expect(code).To(Equal(401), answer)
		}
		_, err := s.configMap()
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no snapshot stored: %v", err)
		ts := &operatorv1alpha1.TargetSource{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name}, ts)).To(Succeed())
		Expect(ts.Annotations).NotTo(HaveKey(operatorv1alpha1.SyncRequestedAnnotation))
		_, err = pushendpoint.NewProvider(k8sClient, ts).Fetch(ctx)
		Expect(err).To(MatchError(inventory.ErrNoSnapshot))
	})

	It("stores an authenticated snapshot where the syncing replica reads it, and wakes it", func() {
		s := newPushSource(false)
		code, answer := post(replicas[0], s.path(), devices("r1", "r2", "r3"), s.bearer())
		Expect(code).To(Equal(200), answer)
		Expect(answer).To(ContainSubstring(`"records":3`))

		cm, err := s.configMap()
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Annotations).To(HaveKeyWithValue(pushendpoint.RecordsAnnotation, "3"))
		Expect(metav1.IsControlledBy(cm, s.ts)).To(BeTrue(), "owned by the TargetSource: deleted with it")
		ts := &operatorv1alpha1.TargetSource{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name}, ts)).To(Succeed())
		Expect(ts.Annotations).To(HaveKeyWithValue(operatorv1alpha1.SyncRequestedAnnotation,
			pushendpoint.SyncRequest(cm.Annotations[pushendpoint.DigestAnnotation])))
		Expect(ts.Annotations).To(HaveKey(pushendpoint.PushedAtAnnotation))

		provider := pushendpoint.NewProvider(k8sClient, ts)
		snap, err := provider.Fetch(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(snap)).To(Equal([]string{"r1", "r2", "r3"}))
		Expect(snap.Records[0]["address"]).To(Equal("10.0.0.1"))
		snap, err = provider.Fetch(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(snap.Unchanged).To(BeTrue(), "nothing posted since")

		By("the same snapshot posted to the other replica changes nothing")
		rv := cm.ResourceVersion
		code, answer = post(replicas[1], s.path(), devices("r1", "r2", "r3"), s.bearer())
		Expect(code).To(Equal(200), answer)
		Expect(answer).NotTo(ContainSubstring(`"changed":true`))
		cm, err = s.configMap()
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.ResourceVersion).To(Equal(rv))
	})

	It("applies a delta posted to another replica than the snapshot", func() {
		s := newPushSource(false)
		code, answer := post(replicas[0], s.path(), devices("r1", "r2", "r3"), s.bearer())
		Expect(code).To(Equal(200), answer)
		provider := pushendpoint.NewProvider(k8sClient, s.ts)
		_, err := provider.Fetch(ctx)
		Expect(err).NotTo(HaveOccurred())

		code, answer = post(replicas[1], s.path()+"/delta",
			`{"upsert":[{"name":"r4","address":"10.0.0.4"},{"name":"r1","address":"10.0.0.9"}],"delete":["r2"]}`, s.bearer())
		Expect(code).To(Equal(200), answer)
		Expect(answer).To(And(ContainSubstring(`"records":3`), ContainSubstring(`"added":1`),
			ContainSubstring(`"replaced":1`), ContainSubstring(`"deleted":1`)))
		snap, err := provider.Fetch(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(snap)).To(Equal([]string{"r1", "r3", "r4"}))
		Expect(snap.Records[0]["address"]).To(Equal("10.0.0.9"))
	})

	It("loses no delta when two replicas store at once", func() {
		s := newPushSource(false)
		code, answer := post(replicas[0], s.path(), devices("r0"), s.bearer())
		Expect(code).To(Equal(200), answer)
		const n = 16
		var wg sync.WaitGroup
		results := make([]string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				code, answer := post(replicas[i%2], s.path()+"/delta", fmt.Sprintf(`{"upsert":[{"name":"d%02d"}]}`, i), s.bearer())
				results[i] = fmt.Sprint(code, " ", answer)
			}()
		}
		wg.Wait()
		Expect(results).To(HaveEach(HavePrefix("200 ")))
		snap, err := pushendpoint.NewProvider(k8sClient, s.ts).Fetch(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(snap.Records).To(HaveLen(n + 1))
	})

	It("accepts a snapshot signed with the TargetSource's HMAC key and refuses a badly signed one", func() {
		s := newPushSource(true)
		body := `{"records":` + devices("r1", "r2") + `}`
		bad := s.signature(body)
		bad[push.SignatureHeader] = bad[push.SignatureHeader][:len(bad[push.SignatureHeader])-4]
		code, answer := post(replicas[1], s.path(), body, bad)
		Expect(code).To(Equal(401), answer)
		Expect(answer).To(ContainSubstring("not 64 hex digits"))
		code, answer = post(replicas[1], s.path(), body, s.bearer())
		Expect(code).To(Equal(401), answer)
		_, err := s.configMap()
		Expect(apierrors.IsNotFound(err)).To(BeTrue())

		code, answer = post(replicas[1], s.path(), body, s.signature(body))
		Expect(code).To(Equal(200), answer)
		snap, err := pushendpoint.NewProvider(k8sClient, s.ts).Fetch(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(snap)).To(Equal([]string{"r1", "r2"}))
	})

	It("refuses a snapshot that does not fit one ConfigMap, keeping the one stored", func() {
		s := newPushSource(false)
		code, answer := post(replicas[0], s.path(), devices("r1"), s.bearer())
		Expect(code).To(Equal(200), answer)
		// Random values do not compress below their entropy: 20,000 records of 64 random bytes in hex (3 MB) weigh
		// more than 1.3 MB compressed.
		var records []string
		for i := range 20000 {
			b := make([]byte, 64)
			_, _ = rand.Read(b)
			records = append(records, fmt.Sprintf(`{"name":"n%d","serial":%q}`, i, hex.EncodeToString(b)))
		}
		code, answer = post(replicas[0], s.path(), "["+strings.Join(records, ",")+"]", s.bearer())
		Expect(code).To(Equal(413), answer)
		Expect(answer).To(ContainSubstring("more than the 1047552 one ConfigMap holds"))
		snap, err := pushendpoint.NewProvider(k8sClient, s.ts).Fetch(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(snap)).To(Equal([]string{"r1"}))
	})

	It("answers 404 for an unknown TargetSource and 409 for one that pulls", func() {
		code, answer := post(replicas[0], "/targetsources/default/nothing", "[]", nil)
		Expect(code).To(Equal(404), answer)
		pulled := &operatorv1alpha1.TargetSource{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pulled"},
			Spec: operatorv1alpha1.TargetSourceSpec{HTTP: &operatorv1alpha1.HTTPInventory{URL: "https://netbox.example.com/api/dcim/devices/"}}}
		Expect(k8sClient.Create(ctx, pulled)).To(Succeed())
		Eventually(func() int {
			code, _ := post(replicas[0], "/targetsources/default/pulled", "[]", nil)
			return code
		}).Should(Equal(409))
	})

	It("refuses to overwrite a ConfigMap of the snapshot's name that is not the TargetSource's", func() {
		s := newPushSource(false)
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns,
			Name: pushendpoint.ConfigMapName(s.name)}, Data: map[string]string{"mine": "yes"}})).To(Succeed())
		code, answer := post(replicas[0], s.path(), devices("r1"), s.bearer())
		Expect(code).To(Equal(409), answer)
		cm, err := s.configMap()
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data).To(HaveKeyWithValue("mine", "yes"))
		_, err = pushendpoint.NewProvider(k8sClient, s.ts).Fetch(ctx)
		Expect(err).To(MatchError(ContainSubstring("is not controlled by TargetSource")))
	})
})

// postsSeries are the values of gnmic_targetsource_push_posts_total of one TargetSource, by result.
func postsSeries(g Gomega, ns, name string) map[string]float64 {
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "gnmic_targetsource_push_posts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["targetsource"] == name {
				out[labels["result"]] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

var _ = Describe("The push endpoint's metrics", func() {
	It("count a push TargetSource's posts from 0 at its creation, and forget them at its deletion", func() {
		ns := "push-metrics"
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		ts := &operatorv1alpha1.TargetSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cmdb"},
			Spec: operatorv1alpha1.TargetSourceSpec{Push: &operatorv1alpha1.PushInventory{Auth: operatorv1alpha1.PushAuth{
				BearerTokenRef: &operatorv1alpha1.SecretKeyReference{Name: "absent", Key: "token"}}}}}
		Expect(k8sClient.Create(ctx, ts)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(postsSeries(g, ns, "cmdb")).To(And(HaveKeyWithValue("applied", 0.0), HaveKeyWithValue("unauthenticated", 0.0)))
		}).Should(Succeed())

		// The series are made by whichever replica's informer sees the TargetSource first; replicas[0] answers
		// 404 until its own cache has it (a 404 is counted without the TargetSource's labels).
		var code int
		var answer string
		Eventually(func() int {
			code, answer = post(replicas[0], "/targetsources/"+ns+"/cmdb", "[]", map[string]string{"Authorization": "Bearer x"})
			return code
		}).ShouldNot(Equal(404))
		Expect(code).To(Equal(401), answer)
		Expect(answer).To(ContainSubstring(`"unauthenticated"`), "a missing Secret is not told to the sender")
		Eventually(func(g Gomega) { g.Expect(postsSeries(g, ns, "cmdb")).To(HaveKeyWithValue("unauthenticated", 1.0)) }).Should(Succeed())

		Expect(k8sClient.Delete(ctx, ts)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(postsSeries(g, ns, "cmdb")).To(BeEmpty()) }).Should(Succeed())
	})
})

var _ = Describe("A large pushed snapshot", func() {
	It("of 10,000 devices is stored in one post, and a delta to it in another", func() {
		s := newPushSource(false)
		// Only the endpoint is measured here: the mapping includes no record, so the controller makes no Target.
		Expect(retryUpdate(s, func(ts *operatorv1alpha1.TargetSource) { ts.Spec.Mapping.Include = "false" })).To(Succeed())
		var records []string
		for i := range 10000 {
			records = append(records, fmt.Sprintf(`{"id":%d,"name":"leaf-%05d","primary_ip":{"address":"10.%d.%d.%d/32"},`+
				`"site":{"slug":"site-%d"},"role":{"slug":"leaf"},"platform":{"slug":"srl"},"tags":[{"slug":"gnmi"}]}`,
				100000+i, i, i>>16&255, i>>8&255, i&255, i%40))
		}
		body := "[" + strings.Join(records, ",") + "]"
		start := time.Now()
		code, answer := post(replicas[1], s.path(), body, s.bearer())
		took := time.Since(start)
		Expect(code).To(Equal(200), answer)
		Expect(answer).To(ContainSubstring(`"records":10000`))

		start = time.Now()
		code, answer = post(replicas[0], s.path()+"/delta", `{"upsert":[{"name":"spine-1"}],"delete":["leaf-00007"]}`, s.bearer())
		deltaTook := time.Since(start)
		Expect(code).To(Equal(200), answer)
		Expect(answer).To(ContainSubstring(`"records":10000`))
		cm, err := s.configMap()
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("10,000 devices", fmt.Sprintf("snapshot of %d bytes answered in %s, stored as %d bytes; delta answered in %s",
			len(body), took.Round(time.Millisecond), len(cm.BinaryData[pushendpoint.SnapshotKey]), deltaTook.Round(time.Millisecond)))
	})
})

// retryUpdate changes the TargetSource of s, retried on a conflict.
func retryUpdate(s *pushSource, change func(*operatorv1alpha1.TargetSource)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ts := &operatorv1alpha1.TargetSource{}
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name}, ts); err != nil {
			return err
		}
		change(ts)
		return k8sClient.Update(ctx, ts)
	})
}
