package controllers_test

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// config/rbac/operator_writes_policy.yaml, as config/default renders it, against kube-apiserver: what the
// operator's ServiceAccount may write of the Secrets and pod status RBAC lets it write everywhere.
var _ = Describe("The operator's write policies", Ordered, func() {
	const ns = "write-policies"
	var (
		install    *operatorInstall
		asOperator client.Client
	)

	BeforeAll(func() {
		install = renderOperatorInstall()
		install.apply()
		waitForWritePolicies(install)
		asOperator = install.client()
		Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	secret := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Data: map[string][]byte{"ca.crt": []byte("issued")}}
	}
	ofCluster := func(cluster string) map[string]string {
		return map[string]string{operatorv1alpha1.ClusterLabel: cluster}
	}

	It("let the operator create and renew a Cluster's TLS Secrets, labelled with the Cluster", func() {
		for _, name := range []string{"edge-api-ca", "edge-api-tls", "edge-target-tls"} {
			s := secret(name, ofCluster("edge"))
			Expect(asOperator.Create(suiteCtx, s)).To(Succeed(), name)
			s.Data["ca.crt"] = []byte("renewed")
			Expect(asOperator.Update(suiteCtx, s)).To(Succeed(), name)
		}
	})

	It("refuse the operator any other Secret, whatever its label", func() {
		for _, s := range []*corev1.Secret{
			secret("database", nil),
			secret("database", ofCluster("edge")),
			secret("core-api-ca", ofCluster("edge")),
			secret("edge-api-ca-copy", ofCluster("edge")),
		} {
			err := asOperator.Create(suiteCtx, s, client.DryRunAll)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "create %s labelled %v: %v", s.Name, s.Labels, err)
			Expect(err.Error()).To(ContainSubstring("gnmic-operator writes only its own Secrets"))
		}
	})

	It("never let the operator overwrite a Secret of a Cluster's name that it did not make, nor drop its label", func() {
		users := secret("core-api-tls", nil)
		Expect(k8sClient.Create(suiteCtx, users)).To(Succeed())
		users.Labels = ofCluster("core")
		err := asOperator.Update(suiteCtx, users)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("was neither labelled as its own, nor annotated operator.gnmic.dev/owner for its Cluster, nor controlled by it"))

		own := secret("edge-api-ca", nil)
		Expect(asOperator.Get(suiteCtx, client.ObjectKeyFromObject(own), own)).To(Succeed())
		delete(own.Labels, operatorv1alpha1.ClusterLabel)
		Expect(apierrors.IsForbidden(asOperator.Update(suiteCtx, own))).To(BeTrue())
	})

	It("let the operator restore the label of a Secret its Cluster controls", func() {
		s := secret("core-target-tls", nil)
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: operatorv1alpha1.GroupVersion.String(), Kind: "Cluster",
			Name: "core", UID: types.UID("0b5e2d1c-3f4a-4b6c-9d8e-7f6a5b4c3d2e"), Controller: ptr.To(true)}}
		Expect(k8sClient.Create(suiteCtx, s)).To(Succeed())
		s.Labels = ofCluster("core")
		Expect(asOperator.Update(suiteCtx, s)).To(Succeed())
	})

	It("let the operator take over a Secret of a Cluster's name that its owner annotation hands to that Cluster, and no other", func() {
		handed := secret("core-gnmi-tls", nil)
		handed.Annotations = map[string]string{operatorv1alpha1.OwnerAnnotation: "Cluster/core"}
		Expect(k8sClient.Create(suiteCtx, handed)).To(Succeed())
		handed.Labels = ofCluster("core")
		Expect(asOperator.Update(suiteCtx, handed)).To(Succeed())

		elsewhere := secret("core-tunnel-tls", nil)
		elsewhere.Annotations = map[string]string{operatorv1alpha1.OwnerAnnotation: "Cluster/edge"}
		Expect(k8sClient.Create(suiteCtx, elsewhere)).To(Succeed())
		elsewhere.Labels = ofCluster("core")
		Expect(apierrors.IsForbidden(asOperator.Update(suiteCtx, elsewhere))).To(BeTrue(), "handed to another Cluster")
	})

	It("let the operator write its metrics API certificate in its own namespace only", func() {
		managed := map[string]string{"app.kubernetes.io/managed-by": "gnmic-operator"}
		certificate := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: install.namespace, Name: "metrics-api-cert-probe", Labels: managed}}
		Expect(asOperator.Create(suiteCtx, certificate, client.DryRunAll)).To(Succeed())
		elsewhere := secret("metrics-api-cert-probe", managed)
		Expect(apierrors.IsForbidden(asOperator.Create(suiteCtx, elsewhere, client.DryRunAll))).To(BeTrue())
	})

	It("let the operator set the readiness gate of a collector pod, and nothing else of any pod's status", func() {
		collector := readyPod(ns, "edge-0", ofCluster("edge"))
		other := readyPod(ns, "web-0", nil)

		Expect(patchPodStatus(asOperator, collector, configuredGate())).To(Succeed())
		Expect(apierrors.IsForbidden(patchPodStatus(asOperator, other, configuredGate()))).To(BeTrue(), "the gate of a pod that is no collector")

		notReady := map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": string(corev1.PodReady), "status": string(corev1.ConditionFalse)}}}}
		err := patchPodStatus(asOperator, collector, notReady)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the kubelet's Ready condition: %v", err)
		Expect(err.Error()).To(ContainSubstring("changes only the condition operator.gnmic.dev/configured"))
		moved := map[string]any{"status": map[string]any{"podIP": "10.0.0.99",
			"podIPs": []any{map[string]any{"$patch": "replace"}, map[string]any{"ip": "10.0.0.99"}}}}
		err = patchPodStatus(asOperator, collector, moved)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the pod IP: %v", err)
	})

	It("leave the writes of everyone else alone", func() {
		Expect(k8sClient.Create(suiteCtx, secret("database", nil))).To(Succeed())
		other := readyPod(ns, "web-1", nil)
		Expect(patchPodStatus(k8sClient, other, configuredGate())).To(Succeed())
	})

	It("let the operator write only the Targets a TargetSource controls, never one made by hand", func() {
		ofSource := []metav1.OwnerReference{{APIVersion: operatorv1alpha1.GroupVersion.String(), Kind: "TargetSource",
			Name: "netbox", UID: types.UID("3f1c0a52-0000-4000-8000-000000000001"), Controller: ptr.To(true)}}
		target := func(name string, owners []metav1.OwnerReference) *operatorv1alpha1.Target {
			return &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners},
				Spec: operatorv1alpha1.TargetSpec{Address: "10.0.0.1:57400", Profile: "p"}}
		}
		Expect(asOperator.Create(suiteCtx, target("from-inventory", ofSource), client.DryRunAll)).To(Succeed())
		err := asOperator.Create(suiteCtx, target("not-controlled", nil), client.DryRunAll)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("gnmic-operator writes only the Targets a TargetSource controls or is handed (annotation operator.gnmic.dev/owner): Target not-controlled"))

		By("a hand-made Target: neither updated, nor taken over, nor deleted")
		hand := target("by-hand", nil)
		Expect(k8sClient.Create(suiteCtx, hand)).To(Succeed())
		hand.Spec.Address = "10.9.9.9:57400"
		Expect(apierrors.IsForbidden(asOperator.Update(suiteCtx, hand.DeepCopy()))).To(BeTrue())
		hand.OwnerReferences = ofSource
		Expect(apierrors.IsForbidden(asOperator.Update(suiteCtx, hand.DeepCopy()))).To(BeTrue())
		Expect(apierrors.IsForbidden(asOperator.Delete(suiteCtx, target("by-hand", nil)))).To(BeTrue())

		By("a TargetSource's Target: updated and deleted, never handed to nobody")
		owned := target("owned", ofSource)
		Expect(k8sClient.Create(suiteCtx, owned)).To(Succeed())
		owned.Spec.Address = "10.0.0.2:57400"
		Expect(asOperator.Update(suiteCtx, owned)).To(Succeed())
		orphan := owned.DeepCopy()
		orphan.OwnerReferences = nil
		Expect(apierrors.IsForbidden(asOperator.Update(suiteCtx, orphan))).To(BeTrue())
		Expect(asOperator.Delete(suiteCtx, owned)).To(Succeed())

		By("a hand-made Target annotated for a TargetSource: taken over, not deleted before it is")
		handed := target("handed", nil)
		handed.Annotations = map[string]string{operatorv1alpha1.OwnerAnnotation: "TargetSource/netbox"}
		Expect(k8sClient.Create(suiteCtx, handed)).To(Succeed())
		Expect(apierrors.IsForbidden(asOperator.Delete(suiteCtx, target("handed", nil)))).To(BeTrue())
		handed.OwnerReferences = ofSource
		Expect(asOperator.Update(suiteCtx, handed)).To(Succeed())
	})
})

// waitForWritePolicies waits until kube-apiserver enforces the install's write policies: it compiles a
// policy and reads its parameter a moment after they are created. (Their status, with the type checking of
// their expressions, is written by kube-controller-manager, which envtest does not run: an expression that
// does not compile fails every write it matches, which the specs see.)
func waitForWritePolicies(install *operatorInstall) {
	probe := readyPod(install.namespace, "write-policy-probe", nil)
	asOperator := install.client()
	Eventually(func(g Gomega) {
		err := asOperator.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: install.namespace,
			Name: "write-policy-probe"}}, client.DryRunAll)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "secret write not refused yet: %v", err)
		err = patchPodStatus(asOperator, probe, configuredGate())
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "pod status write not refused yet: %v", err)
		err = asOperator.Create(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: install.namespace,
			Name: "write-policy-probe"}, Spec: operatorv1alpha1.TargetSpec{Address: "probe:1", Profile: "p"}}, client.DryRunAll)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "target write not refused yet: %v", err)
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// readyPod is a pod the kubelet reports Ready, with an IP.
func readyPod(namespace, name string, labels map[string]string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/main:1"}}}}
	err := k8sClient.Create(suiteCtx, pod)
	if apierrors.IsAlreadyExists(err) {
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		return pod
	}
	Expect(err).NotTo(HaveOccurred())
	pod.Status.PodIP = "10.0.0.1"
	pod.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	Expect(k8sClient.Status().Update(suiteCtx, pod)).To(Succeed())
	return pod
}

// configuredGate is the operator's status patch of a pod's readiness gate.
func configuredGate() map[string]any {
	return map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": operatorv1alpha1.ConditionPodConfigured, "status": string(corev1.ConditionTrue), "reason": "Applied",
		"message": "its collector runs its configuration"}}}}
}

// patchPodStatus writes a strategic-merge patch of the pod's status, as the operator writes readiness gates.
func patchPodStatus(c client.Client, pod *corev1.Pod, patch map[string]any) error {
	body, err := json.Marshal(patch)
	Expect(err).NotTo(HaveOccurred())
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	return c.Status().Patch(suiteCtx, target, client.RawPatch(types.StrategicMergePatchType, body))
}
