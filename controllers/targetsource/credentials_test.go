package targetsource_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

var _ = Describe("A TargetSource over HTTPS whose Secret and CA come late", func() {
	It("says what is missing, changes nothing, and syncs once its token and CA are there", func() {
		r := startReplica()
		DeferCleanup(r.Stop)
		ns := newNamespace()
		netbox := fakenetbox.StartTLS(50, "t0ken")
		DeferCleanup(netbox.Close)
		otherCA, err := pki.NewCA("not the inventory's CA", time.Now(), time.Hour)
		Expect(err).NotTo(HaveOccurred())

		ts := &operatorv1alpha1.TargetSource{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "netbox"},
			Spec: operatorv1alpha1.TargetSourceSpec{
				HTTP: &operatorv1alpha1.HTTPInventory{
					URL: netbox.DevicesURL(20),
					Auth: &operatorv1alpha1.HTTPAuth{Token: &operatorv1alpha1.HTTPTokenAuth{
						SecretKeyRef: operatorv1alpha1.SecretKeyReference{Name: "netbox-token", Key: "token"}}},
					TLS:      &operatorv1alpha1.HTTPInventoryTLS{CARef: &operatorv1alpha1.CABundleReference{ConfigMapKeyRef: &operatorv1alpha1.ConfigMapKeyReference{Name: "netbox-ca", Key: "ca.crt"}}},
					Interval: &metav1.Duration{Duration: time.Hour},
				},
				Mapping: operatorv1alpha1.TargetMapping{Preset: operatorv1alpha1.MappingPresetNetBox,
					Defaults: operatorv1alpha1.TargetDefaults{Profile: "routers"}},
			},
		}
		Expect(k8sClient.Create(suiteCtx, ts)).To(Succeed())
		reachable := func(want string) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				got := source(g, ts)
				g.Expect(condition(got, operatorv1alpha1.ConditionInventoryReachable)).To(And(
					HaveField("Status", metav1.ConditionFalse), HaveField("Message", ContainSubstring(want))))
				g.Expect(condition(got, operatorv1alpha1.ConditionSynced).Reason).To(Equal(operatorv1alpha1.ReasonFetchFailed))
			}, 20*time.Second).Should(Succeed())
			Expect(targets(ns)).To(BeEmpty())
		}
		reachable("Secret netbox-token not found")

		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "netbox-token"},
			Data: map[string][]byte{"token": []byte("t0ken")}})).To(Succeed())
		requestSync(ts)
		reachable("ConfigMap netbox-ca not found")

		ca := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "netbox-ca"},
			Data: map[string]string{"ca.crt": string(otherCA.CertPEM)}}
		Expect(k8sClient.Create(suiteCtx, ca)).To(Succeed())
		requestSync(ts)
		reachable("certificate")

		By("the right CA: the provider is built again with it")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(ca), ca)).To(Succeed())
			ca.Data["ca.crt"] = string(netbox.CAPEM())
			return k8sClient.Update(suiteCtx, ca)
		})).To(Succeed())
		ts = requestSync(ts)
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(condition(ts, operatorv1alpha1.ConditionInventoryReachable).Status).To(Equal(metav1.ConditionTrue))
		Expect(targets(ns)).To(HaveLen(50))
		Expect(ts.Status.Syncs).To(BeEquivalentTo(1), "the failed syncs are not counted")
	})
})
