package crd_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

var _ = Describe("Dial-in devices: Cluster spec.grpcTunnel and TunnelTargetPolicy", func() {
	It("defaults the tunnel server to gNMIc's port 57401, mutual TLS and a ClusterIP Service", func() {
		Expect(k8sClient.Create(ctx, object("Cluster", "tunnel-defaults", "image: gnmic\ngrpcTunnel: {service: {}}"))).To(Succeed())
		var c operatorv1alpha1.Cluster
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tunnel-defaults"}, &c)).To(Succeed())
		Expect(c.Spec.GRPCTunnel.Port).To(Equal(int32(57401)))
		Expect(c.Spec.GRPCTunnel.ClientAuth).To(Equal(operatorv1alpha1.TunnelClientAuthRequireVerify))
		Expect(c.Spec.GRPCTunnel.Service.Type).To(BeEquivalentTo("ClusterIP"))
	})

	DescribeTable("refuses a tunnel the collectors could not run",
		func(spec, message string) {
			err := k8sClient.Create(ctx, object("Cluster", "tunnel-bad", "image: gnmic\ngrpcTunnel: "+spec))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("a port out of range", "{port: 70000}", "spec.grpcTunnel.port"),
		Entry("an unknown client authentication", "{clientAuth: Sometimes}", "spec.grpcTunnel.clientAuth"),
		Entry("an unknown Service type", "{service: {type: ExternalName}}", "spec.grpcTunnel.service.type"),
		Entry("the operator's labels on the Service", "{service: {labels: {operator.gnmic.dev/cluster: x}}}", "the operator owns them"),
	)

	It("accepts a policy on Clusters by name or by selector, and defaults its match to every device", func() {
		Expect(k8sClient.Create(ctx, object("TunnelTargetPolicy", "by-selector",
			"clusterSelector: {}\nprofile: p\nsubscriptionRefs: [s]"))).To(Succeed())
		var p operatorv1alpha1.TunnelTargetPolicy
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "by-selector"}, &p)).To(Succeed())
		Expect(p.Spec.Match).To(Equal(operatorv1alpha1.TunnelTargetMatch{}))
		Expect(k8sClient.Create(ctx, object("TunnelTargetPolicy", "by-name",
			"clusterRefs: [telemetry]\nmatch: {type: ^GNMI_GNOI$, id: ^leaf-}\nprofile: p\nsubscriptionRefs: [s]\noutputRefs: [o]"))).To(Succeed())
	})

	DescribeTable("refuses a policy that says too little",
		func(spec, message string) {
			err := k8sClient.Create(ctx, object("TunnelTargetPolicy", "bad", spec))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("no Cluster", "profile: p\nsubscriptionRefs: [s]", "set clusterRefs or clusterSelector"),
		Entry("no profile", "clusterRefs: [c]\nsubscriptionRefs: [s]", "spec.profile"),
		Entry("no subscription", "clusterRefs: [c]\nprofile: p\nsubscriptionRefs: []", "spec.subscriptionRefs"),
		Entry("a Cluster named twice", "clusterRefs: [c, c]\nprofile: p\nsubscriptionRefs: [s]", "Duplicate value"),
	)

	It("declares the printer columns kubectl shows", func() {
		var crd apiextensionsv1.CustomResourceDefinition
		Expect(typedClient().Get(ctx, client.ObjectKey{Name: "tunneltargetpolicies.operator.gnmic.dev"}, &crd)).To(Succeed())
		var got []string
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			got = append(got, c.Name)
		}
		Expect(got).To(Equal([]string{"Type", "ID", "Profile", "Targets", "Ready", "Age"}))
	})
})
