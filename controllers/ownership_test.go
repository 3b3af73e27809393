package controllers_test

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// A Cluster's objects are named after it (docs/security.md, "Ownership"): objects of those names that the
// operator did not make are someone else's, and stay exactly as they are.
var _ = Describe("Objects of a Cluster's names that the operator did not make", func() {
	const poll = time.Second
	var ns string
	BeforeEach(func() {
		op := startOperatorPolling(poll)
		DeferCleanup(op.Stop)
		ns = fmt.Sprintf("owned-%d", fleetSeq.Add(1))
		Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	// asStored is the object as the API server holds it, every byte: a write of any kind changes it.
	asStored := func(obj client.Object) string {
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		raw, err := json.Marshal(obj)
		Expect(err).NotTo(HaveOccurred())
		return string(raw)
	}
	createCluster := func(name string) *operatorv1alpha1.Cluster {
		c := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: operatorv1alpha1.ClusterSpec{Image: gnmic.DefaultImage, Replicas: ptr.To(int32(2))}}
		Expect(k8sClient.Create(suiteCtx, c)).To(Succeed())
		return c
	}
	resourcesOwned := func(g Gomega, name string) metav1.Condition {
		var c operatorv1alpha1.Cluster
		g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, &c)).To(Succeed())
		cond := meta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionResourcesOwned)
		g.Expect(cond).NotTo(BeNil(), "no ResourcesOwned condition")
		return *cond
	}
	events := func(reason string) []string {
		var list corev1.EventList
		Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.Reason == reason && e.InvolvedObject.Kind == "Cluster" {
				out = append(out, e.Message)
			}
		}
		return out
	}
	exists := func(obj client.Object) bool {
		err := k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return false
		}
		Expect(err).NotTo(HaveOccurred())
		return true
	}

	It("leaves a user's Service and ConfigMap named as the Cluster byte for byte as they are, names them, makes what does not need them, and takes the ConfigMap only when it is handed over", func() {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns, Labels: map[string]string{"app": "db"}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "db"},
				Ports: []corev1.ServicePort{{Name: "postgres", Port: 5432, TargetPort: intstr.FromInt32(5432)}}}}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Data: map[string]string{"dsn": "postgres://db:5432/app"}}
		Expect(k8sClient.Create(suiteCtx, svc)).To(Succeed())
		Expect(k8sClient.Create(suiteCtx, cm)).To(Succeed())
		svcWas, cmWas := asStored(svc), asStored(cm)

		cluster := createCluster("db")
		Eventually(func(g Gomega) {
			c := resourcesOwned(g, "db")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonNameTaken))
			g.Expect(c.Message).To(ContainSubstring("ConfigMap db (not made by the operator)"))
			g.Expect(c.Message).To(ContainSubstring("Service db (not made by the operator)"))
			g.Expect(c.Message).To(ContainSubstring(operatorv1alpha1.OwnerAnnotation + "=Cluster/db"))
		}, 10*poll, 100*time.Millisecond).Should(Succeed())
		Eventually(func() []string { return events(operatorv1alpha1.EventNameTaken) }, 5*poll).Should(HaveLen(1))

		By("making what does not need them: the Cluster's Secrets and budget; not the StatefulSet, whose pods mount the ConfigMap")
		for _, name := range []string{"db-api-ca", "db-api-tls"} {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
			Expect(exists(secret)).To(BeTrue(), "Secret %s", name)
			Expect(metav1.IsControlledBy(secret, cluster)).To(BeTrue())
			Expect(secret.Annotations).To(HaveKeyWithValue(operatorv1alpha1.OwnerAnnotation, "Cluster/db"))
		}
		Eventually(func() bool {
			return exists(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-target-tls", Namespace: ns}})
		}, 5*poll).
			Should(BeTrue())

		By("reconciling for a while without a write to either, nor a second warning")
		Consistently(func(g Gomega) {
			g.Expect(asStored(svc)).To(Equal(svcWas))
			g.Expect(asStored(cm)).To(Equal(cmWas))
			g.Expect(exists(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}})).To(BeFalse())
			g.Expect(events(operatorv1alpha1.EventNameTaken)).To(HaveLen(1))
		}, 15*poll, 500*time.Millisecond).Should(Succeed())

		By("taking the ConfigMap over once its annotation hands it to the Cluster")
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
		cm.Annotations = map[string]string{operatorv1alpha1.OwnerAnnotation: "Cluster/db"}
		Expect(k8sClient.Update(suiteCtx, cm)).To(Succeed())
		Eventually(func(g Gomega) {
			var have corev1.ConfigMap
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(cm), &have)).To(Succeed())
			g.Expect(metav1.IsControlledBy(&have, cluster)).To(BeTrue())
			g.Expect(have.Data).NotTo(HaveKey("dsn"))
			g.Expect(exists(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}})).To(BeTrue())
			c := resourcesOwned(g, "db")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(HavePrefix("1 object(s)"))
			g.Expect(c.Message).To(ContainSubstring("Service db"))
			g.Expect(c.Message).NotTo(ContainSubstring("ConfigMap"))
		}, 10*poll, 100*time.Millisecond).Should(Succeed())
		Expect(asStored(svc)).To(Equal(svcWas))

		By("saying so once nothing is someone else's any more")
		Expect(k8sClient.Delete(suiteCtx, svc)).To(Succeed())
		Eventually(func(g Gomega) {
			c := resourcesOwned(g, "db")
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonResourcesOwned))
			g.Expect(events(operatorv1alpha1.EventNamesFree)).To(HaveLen(1))
		}, 10*poll, 200*time.Millisecond).Should(Succeed())
	})

	It("leaves a user's Secret of the name of the Cluster's CA alone, and makes nothing its certificates would sign", func() {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "edge-api-ca", Namespace: ns},
			Data: map[string][]byte{"ca.crt": []byte("theirs"), "ca.key": []byte("theirs")}}
		Expect(k8sClient.Create(suiteCtx, secret)).To(Succeed())
		was := asStored(secret)
		createCluster("edge")
		Eventually(func(g Gomega) {
			c := resourcesOwned(g, "edge")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonNameTaken))
			g.Expect(c.Message).To(ContainSubstring("Secret edge-api-ca (not made by the operator)"))
		}, 10*poll, 100*time.Millisecond).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(asStored(secret)).To(Equal(was))
			g.Expect(exists(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: ns}})).To(BeFalse())
			g.Expect(exists(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "edge-api-tls", Namespace: ns}})).To(BeFalse())
		}, 5*poll, 500*time.Millisecond).Should(Succeed())
		Expect(events(operatorv1alpha1.EventNameTaken)).To(HaveLen(1))
	})
})
