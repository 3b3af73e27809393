package crd_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// balancerTargets are two Deployments, zone-a and zone-b.
const balancerTargets = `targets:
- name: zone-a
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors-a}
- name: zone-b
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors-b}
`

const (
	proportionalPolicy = "policy: {policyName: proportional, proportions: {targetProportions: {zone-a: 1, zone-b: 1}}}"
	priorityPolicy     = "policy: {policyName: priority, priorities: {targetOrder: [zone-a, zone-b]}}"
)

var _ = Describe("Balancer validation", func() {
	DescribeTable("rejects what the API can tell is wrong, with a message that names it",
		func(spec string, wantMessages ...string) {
			invalidSeq++
			err := k8sClient.Create(ctx, object("Balancer", fmt.Sprintf("invalid-balancer-%d", invalidSeq), spec))
			Expect(err).To(HaveOccurred(), "the apiserver accepted an invalid Balancer:\n%s", spec)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			for _, want := range wantMessages {
				Expect(err.Error()).To(ContainSubstring(want))
			}
		},
		Entry("no targets", "targets: []\n"+proportionalPolicy, "spec.targets in body should have at least 1 items"),
		Entry("no policy", balancerTargets, "spec.policy: Required value"),
		Entry("an unknown policy", balancerTargets+"policy: {policyName: random}", `spec.policy.policyName: Unsupported value: "random"`),
		Entry("the policy's fields spelled as before this API took the KEP's names (name, priority)", balancerTargets+
			"policy: {name: priority, priority: {targetOrder: [zone-a, zone-b]}}", "spec.policy.policyName: Required value"),
		Entry("the policy's fields spelled as before this API took the KEP's names (name, proportional)", balancerTargets+
			"policy: {name: proportional, proportional: {targetProportions: {zone-a: 1, zone-b: 1}}}", "spec.policy.policyName: Required value"),
		Entry("the priority policy without its settings", balancerTargets+"policy: {policyName: priority}",
			"policy.priorities is set when, and only when, policy.policyName is priority"),
		Entry("the proportional policy with the priority policy's settings", balancerTargets+
			"policy: {policyName: proportional, priorities: {targetOrder: [zone-a]}}",
			"policy.priorities is set when, and only when, policy.policyName is priority",
			"policy.proportions is set when, and only when, policy.policyName is proportional"),
		Entry("a target order naming a target that does not exist", balancerTargets+
			"policy: {policyName: priority, priorities: {targetOrder: [zone-a, zone-c]}}",
			"policy.priorities.targetOrder must name targets of spec.targets"),
		Entry("a target order naming a target twice", balancerTargets+
			"policy: {policyName: priority, priorities: {targetOrder: [zone-a, zone-a]}}", `Duplicate value: "zone-a"`),
		Entry("proportions naming a target that does not exist", balancerTargets+
			"policy: {policyName: proportional, proportions: {targetProportions: {zone-a: 1, zone-c: 1}}}",
			"policy.proportions.targetProportions must name targets of spec.targets"),
		Entry("proportions that are all 0", balancerTargets+
			"policy: {policyName: proportional, proportions: {targetProportions: {zone-a: 0, zone-b: 0}}}",
			"at least one of targetProportions must be above 0"),
		Entry("a negative proportion", balancerTargets+
			"policy: {policyName: proportional, proportions: {targetProportions: {zone-a: -1, zone-b: 2}}}",
			"targetProportions must not be negative"),
		Entry("two targets of the same name", `targets:
- name: zone-a
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors-a}
- name: zone-a
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors-b}
`+priorityPolicy, `spec.targets[1]: Duplicate value`),
		Entry("two targets scaling the same Deployment", `targets:
- name: zone-a
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors}
- name: zone-b
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors}
`+priorityPolicy, "two targets must not scale the same workload"),
		Entry("a target whose minReplicas is above its maxReplicas", `targets:
- name: zone-a
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors-a}
  minReplicas: 3
  maxReplicas: 2
- name: zone-b
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors-b}
`+priorityPolicy, "minReplicas must not be above maxReplicas"),
		Entry("a target name that is not a DNS label", `targets:
- name: Zone_A
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: collectors-a}
policy: {policyName: priority, priorities: {targetOrder: [Zone_A]}}`, "spec.targets[0].name in body should match"),
		Entry("a target without apiVersion", `targets:
- name: zone-a
  scaleTargetRef: {kind: Deployment, name: collectors-a}
policy: {policyName: priority, priorities: {targetOrder: [zone-a]}}`, "spec.targets[0].scaleTargetRef.apiVersion: Required value"),
		Entry("negative replicas", balancerTargets+priorityPolicy+"\nreplicas: -1",
			"spec.replicas in body should be greater than or equal to 0"),
		Entry("a startup timeout that is not a duration", balancerTargets+
			"policy: {policyName: priority, priorities: {targetOrder: [zone-a]}, fallback: {startupTimeout: soon}}",
			"startupTimeout must be a positive duration such as 5m"),
		Entry("a startup timeout of 0", balancerTargets+
			"policy: {policyName: priority, priorities: {targetOrder: [zone-a]}, fallback: {startupTimeout: 0s}}",
			"startupTimeout must be a positive duration such as 5m"),
	)

	It("accepts a target order and proportions that leave targets out, and defaults replicas to 1", func() {
		for name, policy := range map[string]string{
			"priority-subset":     "policy: {policyName: priority, priorities: {targetOrder: [zone-b]}, fallback: {startupTimeout: 90s}}",
			"proportional-subset": "policy: {policyName: proportional, proportions: {targetProportions: {zone-a: 3}}}",
		} {
			obj := object("Balancer", name, balancerTargets+policy)
			Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "a valid Balancer was rejected: %s", policy)
			var b operatorv1alpha1.Balancer
			Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &b)).To(Succeed())
			Expect(b.Spec.Replicas).To(Equal(ptrTo(int32(1))))
		}
	})

	It("declares its printer columns", func() {
		var crd apiextensionsv1.CustomResourceDefinition
		Expect(typedClient().Get(ctx, client.ObjectKey{Name: "balancers.operator.gnmic.dev"}, &crd)).To(Succeed())
		var got []string
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			got = append(got, c.Name)
		}
		Expect(got).To(Equal([]string{"Policy", "Replicas", "Current", "Ready", "Balanced", "Fallback", "Age"}))
	})

	It("lets an autoscaler set replicas and read the pod count and selector through the scale subresource", func() {
		Expect(k8sClient.Create(ctx, object("Balancer", "scaled-balancer", balancerTargets+priorityPolicy+"\nreplicas: 2"))).To(Succeed())
		var b operatorv1alpha1.Balancer
		tc := typedClient()
		Expect(tc.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "scaled-balancer"}, &b)).To(Succeed())
		b.Status.Replicas, b.Status.Selector = 3, "app=collectors"
		Expect(tc.Status().Update(ctx, &b)).To(Succeed())

		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(dc))
		scales, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(dc))
		Expect(err).NotTo(HaveOccurred())
		gr := schema.GroupResource{Group: "operator.gnmic.dev", Resource: "balancers"}
		s, err := scales.Scales(namespace).Get(ctx, gr, "scaled-balancer", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Spec.Replicas).To(Equal(int32(2)))
		Expect(s.Status.Replicas).To(Equal(int32(3)))
		Expect(s.Status.Selector).To(Equal("app=collectors"))

		s.Spec.Replicas = 5
		_, err = scales.Scales(namespace).Update(ctx, gr, s, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(tc.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "scaled-balancer"}, &b)).To(Succeed())
		Expect(*b.Spec.Replicas).To(Equal(int32(5)))
	})
})

func ptrTo[T any](v T) *T { return &v }
