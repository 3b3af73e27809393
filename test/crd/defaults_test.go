package crd_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

var _ = Describe("Defaults", func() {
	// The operator writes status with JSON merge patches computed against its cache, so a count that stays 0
	// is never sent; the schema's defaults must show it anyway, in the object and in kubectl get.
	DescribeTable("show every count of a status as 0 once any status is written",
		func(kind, resource, spec string, counts, columns []string) {
			name := "zero-counts-" + resource
			obj := object(kind, name, spec)
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			Expect(k8sClient.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType,
				[]byte(`{"status":{"observedGeneration":1}}`)))).To(Succeed())

			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, got)).To(Succeed())
			for _, field := range counts {
				v, found, err := unstructured.NestedInt64(got.Object, "status", field)
				Expect(err).NotTo(HaveOccurred())
				Expect(found).To(BeTrue(), "status.%s is missing", field)
				Expect(v).To(BeZero(), "status.%s", field)
			}

			table := serverTable(ctx, schema.GroupVersionResource{Group: "operator.gnmic.dev", Version: "v1alpha1", Resource: resource}, name)
			Expect(table.Rows).To(HaveLen(1))
			index := map[string]int{}
			for i, c := range table.ColumnDefinitions {
				index[c.Name] = i
			}
			for _, column := range columns {
				Expect(index).To(HaveKey(column))
				Expect(table.Rows[0].Cells[index[column]]).To(Equal(float64(0)), "column %s of kubectl get %s", column, resource)
			}
		},
		Entry("Cluster", "Cluster", "clusters", "image: gnmic",
			[]string{"readyReplicas", "pipelinesCount", "targetsCount", "unassignedTargets", "subscriptionsCount", "inputsCount", "outputsCount"},
			[]string{"Ready", "Pipelines", "Targets", "Unassigned", "Subs", "Inputs", "Outputs"}),
		Entry("Pipeline", "Pipeline", "pipelines", "clusterRef: c",
			[]string{"targetsCount", "subscriptionsCount", "outputsCount", "inputsCount"},
			[]string{"Targets", "Subs", "Outputs", "Inputs"}),
	)

	It("gives a minimal Cluster one replica, the REST port 7890 over mutual TLS, a 60s grace period, a PDB and a NetworkPolicy", func() {
		Expect(k8sClient.Create(ctx, object("Cluster", "minimal", "image: gnmic"))).To(Succeed())
		var c operatorv1alpha1.Cluster
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "minimal"}, &c)).To(Succeed())
		Expect(c.Spec.Replicas).To(Equal(ptr.To[int32](1)))
		Expect(c.Spec.API.RestPort).To(Equal(int32(7890)))
		Expect(c.Spec.API.Insecure).To(BeNil(), "the collector API keeps mutual TLS unless the Cluster opts out")
		Expect(c.Spec.NetworkPolicy.Enabled).To(Equal(ptr.To(true)))
		Expect(c.Spec.TargetDistribution.PodCapacity).To(BeNil(), "capacity stays automatic unless set")
		Expect(c.Spec.TargetDistribution.UnreadyGracePeriod.Duration).To(Equal(60 * time.Second))
		Expect(c.Spec.PodDisruptionBudget.Enabled).To(Equal(ptr.To(true)))
	})

	It("gives collector TLS a 90-day certificate lifetime when enabled with tls: {}", func() {
		Expect(k8sClient.Create(ctx, object("Cluster", "with-tls", "image: gnmic\napi: {tls: {}}"))).To(Succeed())
		var c operatorv1alpha1.Cluster
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "with-tls"}, &c)).To(Succeed())
		Expect(c.Spec.API.RestPort).To(Equal(int32(7890)))
		Expect(c.Spec.API.TLS.CertificateLifetime.Duration).To(Equal(2160 * time.Hour))
	})

	It("runs a gNMI server only when enabled, on gNMIc's port 57400 by default", func() {
		Expect(k8sClient.Create(ctx, object("Cluster", "with-gnmi", "image: gnmic\napi: {gnmi: {}}"))).To(Succeed())
		var c operatorv1alpha1.Cluster
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "with-gnmi"}, &c)).To(Succeed())
		Expect(c.Spec.API.GNMI.Enabled).To(Equal(ptr.To(false)))
		Expect(c.Spec.API.GNMI.Port).To(Equal(int32(57400)))
	})

	It("gives an Output's Service the type ClusterIP and a ServiceMonitor unless disabled", func() {
		Expect(k8sClient.Create(ctx, object("Output", "scraped", "type: prometheus\nservice: {}"))).To(Succeed())
		var o operatorv1alpha1.Output
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "scraped"}, &o)).To(Succeed())
		Expect(o.Spec.Service.Type).To(Equal(corev1.ServiceTypeClusterIP))
		Expect(o.Spec.Service.ServiceMonitor.Enabled).To(Equal(ptr.To(true)))
	})

	It("gives a TargetProfile a 10s timeout and a 10s retry timer", func() {
		Expect(k8sClient.Create(ctx, object("TargetProfile", "defaults", "encoding: JSON"))).To(Succeed())
		var p operatorv1alpha1.TargetProfile
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "defaults"}, &p)).To(Succeed())
		Expect(p.Spec.Timeout.Duration).To(Equal(10 * time.Second))
		Expect(p.Spec.RetryTimer.Duration).To(Equal(10 * time.Second))
	})

	It("enables a Pipeline unless it says otherwise, and keeps an explicit false", func() {
		Expect(k8sClient.Create(ctx, object("Pipeline", "on", "clusterRef: c"))).To(Succeed())
		Expect(k8sClient.Create(ctx, object("Pipeline", "off", "clusterRef: c\nenabled: false"))).To(Succeed())
		var on, off operatorv1alpha1.Pipeline
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "on"}, &on)).To(Succeed())
		Expect(typedClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "off"}, &off)).To(Succeed())
		Expect(on.Spec.Enabled).To(Equal(ptr.To(true)))
		Expect(off.Spec.Enabled).To(Equal(ptr.To(false)))
	})
})
