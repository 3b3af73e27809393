package crd_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

const validHTTP = "http: {url: 'https://netbox.example/api/dcim/devices/'}"

var _ = Describe("TargetSources", func() {
	DescribeTable("are rejected with a message that names the problem",
		func(spec string, want string) {
			invalidSeq++
			err := k8sClient.Create(ctx, object("TargetSource", fmt.Sprintf("invalid-ts-%d", invalidSeq), spec))
			Expect(err).To(HaveOccurred(), "the apiserver accepted an invalid TargetSource:\n%s", spec)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("without a provider", "mapping: {preset: netbox}", "exactly one provider must be set"),
		Entry("with two providers", validHTTP+"\npush: {auth: {bearerTokenRef: {name: s, key: k}}}", "exactly one provider must be set"),
		Entry("with a relative URL", "http: {url: /api/dcim/devices/}", "url must be an absolute http:// or https:// URL"),
		Entry("polling faster than every 10s", "http: {url: 'https://n.example/', interval: 5s}", "interval must be a duration of at least 10s"),
		Entry("with token and basic auth", "http: {url: 'https://n.example/', auth: {token: {secretKeyRef: {name: s, key: k}}, basic: {secretName: s}}}",
			"auth must set exactly one of token and basic"),
		Entry("with an Authorization header", "http: {url: 'https://n.example/', headers: {Authorization: 'Token x'}}", "set Authorization through auth"),
		Entry("skipping verification with a CA", "http: {url: 'https://n.example/', tls: {insecureSkipVerify: true, caRef: {secretKeyRef: {name: s, key: ca.crt}}}}",
			"tls.insecureSkipVerify and tls.caRef exclude each other"),
		Entry("with a CA from a Secret and a ConfigMap", "http: {url: 'https://n.example/', tls: {caRef: {secretKeyRef: {name: s, key: k}, configMapKeyRef: {name: c, key: k}}}}",
			"caRef must set exactly one of secretKeyRef and configMapKeyRef"),
		Entry("with an unknown preset", validHTTP+"\nmapping: {preset: nautobot}", `spec.mapping.preset: Unsupported value: "nautobot"`),
		Entry("deleting before the first miss", validHTTP+"\nsync: {deleteAfterMisses: 0}", "spec.sync.deleteAfterMisses in body should be greater than or equal to 1"),
		Entry("with a guard above 100%", validHTTP+"\nsync: {minRecordsPercent: 101}", "spec.sync.minRecordsPercent in body should be less than or equal to 100"),
		Entry("with no record allowed", validHTTP+"\nsync: {maxRecords: 0}", "spec.sync.maxRecords in body should be greater than or equal to 1"),
		Entry("with a byte budget under a kilobyte", validHTTP+"\nsync: {maxBytes: 100}", "spec.sync.maxBytes in body should be greater than or equal to 1024"),
		Entry("mapping within half a second", validHTTP+"\nsync: {mappingTimeout: 500ms}", "mappingTimeout must be a duration from 1s to 30m"),
		Entry("with a wildcard among the allowed profiles", validHTTP+"\nmapping: {preset: netbox, allowedProfiles: [routers, '*']}",
			"allowedProfiles has no wildcard: list each TargetProfile by name"),
		Entry("with a glob among the allowed profiles", validHTTP+"\nmapping: {preset: netbox, allowedProfiles: ['srl-*']}",
			"allowedProfiles has no wildcard: list each TargetProfile by name"),
		Entry("with an empty allowed profile", validHTTP+"\nmapping: {allowedProfiles: ['']}",
			"spec.mapping.allowedProfiles[0] in body should be at least 1 chars long"),
		Entry("with an allowed profile twice", validHTTP+"\nmapping: {allowedProfiles: [srl, srl]}", `spec.mapping.allowedProfiles[1]: Duplicate value: "srl"`),
		Entry("with a push provider without auth", "push: {auth: {}}", "push.auth must set exactly one of bearerTokenRef and hmacSecretRef"),
	)

	It("takes the documented defaults, and 0 turns the truncation guard off", func() {
		Expect(k8sClient.Create(ctx, object("TargetSource", "ts-defaults", validHTTP))).To(Succeed())
		var ts operatorv1alpha1.TargetSource
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "ts-defaults"}, &ts)).To(Succeed())
		Expect(ts.Spec.HTTP.Interval.Duration.String()).To(Equal("5m0s"))
		Expect(ts.Spec.HTTP.Timeout.Duration.String()).To(Equal("1m0s"))
		Expect(ts.Spec.HTTP.MaxPageBytes).To(BeEquivalentTo(64 << 20))
		Expect(ts.Spec.Sync.DeleteAfterMisses).To(BeEquivalentTo(3))
		Expect(*ts.Spec.Sync.MinRecordsPercent).To(BeEquivalentTo(50))
		Expect(ts.Spec.Sync.BatchSize).To(BeEquivalentTo(200))
		Expect(ts.Spec.Sync.MaxRecords).To(BeEquivalentTo(100_000))
		Expect(ts.Spec.Sync.MaxBytes).To(BeEquivalentTo(256 << 20))
		Expect(ts.Spec.Sync.MappingTimeout.Duration.String()).To(Equal("30s"))
		Expect(ts.Spec.Mapping.Defaults.Port).To(BeEquivalentTo(57400))

		Expect(k8sClient.Create(ctx, object("TargetSource", "ts-no-guard", validHTTP+"\nsync: {minRecordsPercent: 0}"))).To(Succeed())
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "ts-no-guard"}, &ts)).To(Succeed())
		Expect(*ts.Spec.Sync.MinRecordsPercent).To(BeZero())
	})
})
