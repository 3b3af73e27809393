package crd_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A Balancer stored while the policy's fields were name, priority and proportional holds none of them once
// the CRD names them policyName, priorities and proportions: the API server prunes the fields it does not
// know when it reads the object. The API refuses such a policy on create and on update, but the object
// must stay writable where its spec does not change (status, labels, finalizers), so that the operator can
// report it and the user can delete it.
var _ = Describe("A Balancer stored before the policy's fields were renamed", Serial, func() {
	const name = "stored-before-rename"
	withoutPolicyName := balancerTargets + "policy: {fallback: {startupTimeout: 90s}}"

	It("keeps its status and metadata writable, and takes the new names on its next update", func() {
		tc := typedClient()
		key := client.ObjectKey{Name: "balancers.operator.gnmic.dev"}
		var crd apiextensionsv1.CustomResourceDefinition
		Expect(tc.Get(ctx, key, &crd)).To(Succeed())
		installed := crd.Spec.DeepCopy()

		By("storing a Balancer without policyName, through a CRD that does not require it")
		policy := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["policy"]
		policy.Required, policy.XValidations = nil, nil
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["policy"] = policy
		Expect(tc.Update(ctx, &crd)).To(Succeed())
		DeferCleanup(func() {
			Expect(tc.Get(ctx, key, &crd)).To(Succeed())
			crd.Spec = *installed
			Expect(tc.Update(ctx, &crd)).To(Succeed())
		})
		Eventually(func() error {
			return k8sClient.Create(ctx, object("Balancer", name, withoutPolicyName))
		}).Should(Succeed())

		By("installing the CRD again")
		Expect(tc.Get(ctx, key, &crd)).To(Succeed())
		crd.Spec = *installed
		Expect(tc.Update(ctx, &crd)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Create(ctx, object("Balancer", name+"-new", withoutPolicyName))
		}).Should(MatchError(ContainSubstring("spec.policy.policyName: Required value")))

		stored := object("Balancer", name, "")
		Expect(k8sClient.Status().Patch(ctx, stored, client.RawPatch(types.MergePatchType,
			[]byte(`{"status":{"replicas":2}}`)))).To(Succeed(), "a status write")
		Expect(k8sClient.Patch(ctx, stored, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"app":"collectors"},"finalizers":["example.com/hold"]}}`)))).To(Succeed(), "a metadata write")

		By("an update of the policy must name it")
		err := k8sClient.Patch(ctx, stored, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"policy":{"priorities":{"targetOrder":["zone-a"]}}}}`)))
		Expect(err).To(MatchError(ContainSubstring("spec.policy.policyName: Required value")))
		Expect(k8sClient.Patch(ctx, stored, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"policy":{"policyName":"priority","priorities":{"targetOrder":["zone-a"]}}}}`)))).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, stored)).To(Succeed())
		policyName, _, _ := unstructured.NestedString(stored.Object, "spec", "policy", "policyName")
		Expect(policyName).To(Equal("priority"))

		Expect(k8sClient.Delete(ctx, stored)).To(Succeed())
		Expect(k8sClient.Patch(ctx, stored, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed(), "a finalizer's removal")
	})
})
