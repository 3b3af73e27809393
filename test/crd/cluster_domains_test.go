package crd_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterDomains is a Cluster spec with two domains, zone-a and zone-b.
const clusterDomains = `image: ghcr.io/openconfig/gnmic:0.47.0
domains:
- name: zone-a
  nodeSelector: {topology.kubernetes.io/zone: a}
- name: zone-b
  nodeSelector: {topology.kubernetes.io/zone: b}
`

var _ = Describe("Cluster domains validation", func() {
	DescribeTable("rejects what the API can tell is wrong, with a message that names it",
		func(spec string, wantMessages ...string) {
			invalidSeq++
			err := k8sClient.Create(ctx, object("Cluster", fmt.Sprintf("invalid-domains-%d", invalidSeq), spec))
			Expect(err).To(HaveOccurred(), "the apiserver accepted an invalid Cluster:\n%s", spec)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			for _, want := range wantMessages {
				Expect(err.Error()).To(ContainSubstring(want))
			}
		},
		Entry("a domain policy without domains", "image: ghcr.io/openconfig/gnmic:0.47.0\n"+
			"domainPolicy: {policyName: priority, priorities: {targetOrder: [zone-a]}}", "domainPolicy needs domains"),
		Entry("a priority order naming a domain that does not exist", clusterDomains+
			"domainPolicy: {policyName: priority, priorities: {targetOrder: [zone-a, zone-c]}}",
			"domainPolicy.priorities.targetOrder must name domains of spec.domains"),
		Entry("proportions naming a domain that does not exist", clusterDomains+
			"domainPolicy: {policyName: proportional, proportions: {targetProportions: {zone-a: 1, zone-c: 1}}}",
			"domainPolicy.proportions.targetProportions must name domains of spec.domains"),
		Entry("a domain policy spelled as before this API took the KEP's names (name, proportional)", clusterDomains+
			"domainPolicy: {name: proportional, proportional: {targetProportions: {zone-a: 1, zone-b: 1}}}",
			"spec.domainPolicy.policyName: Required value"),
		Entry("the priority policy without its settings", clusterDomains+"domainPolicy: {policyName: priority}",
			"policy.priorities is set when, and only when, policy.policyName is priority"),
		Entry("two domains of the same name", "image: ghcr.io/openconfig/gnmic:0.47.0\ndomains: [{name: zone-a}, {name: zone-a}]",
			"spec.domains[1]: Duplicate value"),
		Entry("a domain whose minReplicas is above its maxReplicas", "image: ghcr.io/openconfig/gnmic:0.47.0\n"+
			"domains: [{name: zone-a, minReplicas: 3, maxReplicas: 2}]", "minReplicas must not be above maxReplicas"),
		Entry("a domain name that is not a DNS label", "image: ghcr.io/openconfig/gnmic:0.47.0\ndomains: [{name: Zone_A}]",
			"spec.domains[0].name in body should match"),
		Entry("an empty list of domains", "image: ghcr.io/openconfig/gnmic:0.47.0\ndomains: []",
			"spec.domains in body should have at least 1 items"),
		Entry("a startup timeout of 0", clusterDomains+
			"domainPolicy: {policyName: priority, priorities: {targetOrder: [zone-a]}, fallback: {startupTimeout: 0s}}",
			"startupTimeout must be a positive duration such as 5m"),
		Entry("pod labels that set the domain label", clusterDomains+"podLabels: {operator.gnmic.dev/domain: zone-a}",
			"podLabels must not set operator.gnmic.dev/domain"),
	)

	It("accepts domains with and without a policy, and a policy that leaves domains out", func() {
		for name, spec := range map[string]string{
			"domains-evenly":   clusterDomains,
			"domains-priority": clusterDomains + "domainPolicy: {policyName: priority, priorities: {targetOrder: [zone-b]}, fallback: {startupTimeout: 90s}}",
			"domains-shares":   clusterDomains + "domainPolicy: {policyName: proportional, proportions: {targetProportions: {zone-a: 2}}}",
		} {
			Expect(k8sClient.Create(ctx, object("Cluster", name, spec))).To(Succeed(), name)
			c := object("Cluster", name, "")
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, c)).To(Succeed())
			domains, _, err := unstructured.NestedSlice(c.Object, "spec", "domains")
			Expect(err).NotTo(HaveOccurred())
			Expect(domains).To(HaveLen(2), "%s keeps its domains", name)
		}
	})
})
