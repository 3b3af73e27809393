package crd_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var consulSeq int

var _ = Describe("TargetSource's consul provider", func() {
	create := func(spec string) error {
		consulSeq++
		return k8sClient.Create(ctx, object("TargetSource", fmt.Sprintf("consul-%d", consulSeq), spec))
	}

	DescribeTable("accepts what Consul can be asked",
		func(spec string) {
			Expect(create(spec)).To(Succeed())
		},
		Entry("host:port and one service", "consul: {address: 'consul.consul.svc:8500', services: [gnmi]}\nmapping: {preset: consul}"),
		Entry("every field", `consul:
  address: https://consul-server.consul.svc:8501
  datacenter: dc-1
  services: [gnmi, gnmi-tls]
  tags: [gnmi, prod]
  filter: NodeMeta.site == "ams1"
  nodeMetaLabels: [site, rack_id, k8s.zone]
  tokenSecretRef: {name: consul-token, key: token}
  tls:
    caRef: {configMapKeyRef: {name: consul-ca, key: ca.crt}}
    serverName: server.dc1.consul
    clientCertSecretName: consul-client
  interval: 30s
  timeout: 10s
mapping: {preset: consul, defaults: {profile: p}}`),
		Entry("an https URL that skips verification", "consul: {address: 'https://10.0.0.1:8501/', services: [gnmi], tls: {insecureSkipVerify: true}}"),
	)

	It("defaults the interval to 1m and the timeout to 30s", func() {
		consulSeq++
		obj := object("TargetSource", fmt.Sprintf("consul-%d", consulSeq), "consul: {address: 'consul:8500', services: [gnmi]}")
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		interval, _, _ := unstructured.NestedString(obj.Object, "spec", "consul", "interval")
		timeout, _, _ := unstructured.NestedString(obj.Object, "spec", "consul", "timeout")
		Expect([]string{interval, timeout}).To(Equal([]string{"1m", "30s"}))
	})

	DescribeTable("refuses with a message that names the problem",
		func(spec string, wantMessages ...string) {
			err := create(spec)
			Expect(err).To(HaveOccurred(), "the apiserver accepted:\n%s", spec)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			for _, want := range wantMessages {
				Expect(err.Error()).To(ContainSubstring(want))
			}
		},
		Entry("consul and http together", "consul: {address: 'consul:8500', services: [gnmi]}\nhttp: {url: 'https://netbox'}",
			"exactly one provider must be set: http, push or consul"),
		Entry("no service", "consul: {address: 'consul:8500', services: []}", "spec.consul.services: Invalid value"),
		Entry("no services field", "consul: {address: 'consul:8500'}", "spec.consul.services: Required value"),
		Entry("a service twice", "consul: {address: 'consul:8500', services: [gnmi, gnmi]}", "Duplicate value"),
		Entry("a service name with a slash", "consul: {address: 'consul:8500', services: [gnmi/x]}", "spec.consul.services[0]"),
		Entry("an address with a path", "consul: {address: 'https://consul:8501/v1', services: [gnmi]}",
			"address must be host:port or an http:// or https:// URL without a path"),
		Entry("a unix socket", "consul: {address: 'unix:///run/consul.sock', services: [gnmi]}",
			"address must be host:port or an http:// or https:// URL without a path"),
		Entry("tls with a plain address", "consul: {address: 'consul:8500', services: [gnmi], tls: {serverName: consul}}",
			"tls needs an https:// address"),
		Entry("a CA and skipping verification", `consul: {address: 'https://consul:8501', services: [gnmi],
  tls: {insecureSkipVerify: true, caRef: {secretKeyRef: {name: ca, key: ca.crt}}}}`,
			"tls.insecureSkipVerify and tls.caRef exclude each other"),
		Entry("a node metadata key that is no label name", "consul: {address: 'consul:8500', services: [gnmi], nodeMetaLabels: [-site]}",
			"spec.consul.nodeMetaLabels[0]"),
		Entry("a datacenter with a dot", "consul: {address: 'consul:8500', services: [gnmi], datacenter: dc.1}",
			"spec.consul.datacenter"),
		Entry("an interval of 1s", "consul: {address: 'consul:8500', services: [gnmi], interval: 1s}",
			"interval must be a duration of at least 10s"),
		Entry("an unknown preset", "consul: {address: 'consul:8500', services: [gnmi]}\nmapping: {preset: zookeeper}",
			`spec.mapping.preset: Unsupported value: "zookeeper"`),
	)
})
