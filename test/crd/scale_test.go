package crd_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
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

var _ = Describe("Cluster scale subresource", func() {
	It("lets an autoscaler set replicas and read the pod selector through the scale client", func() {
		Expect(k8sClient.Create(ctx, object("Cluster", "scaled", "image: gnmic\nreplicas: 1"))).To(Succeed())

		// The operator publishes the selector and ready count in status; do it here as it would.
		c := &operatorv1alpha1.Cluster{}
		tc := typedClient()
		Expect(tc.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "scaled"}, c)).To(Succeed())
		c.Status.Selector = operatorv1alpha1.ClusterLabel + "=scaled"
		c.Status.ReadyReplicas = 1
		Expect(tc.Status().Update(ctx, c)).To(Succeed())

		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(dc))
		scales, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(dc))
		Expect(err).NotTo(HaveOccurred())
		gr := schema.GroupResource{Group: "operator.gnmic.dev", Resource: "clusters"}

		s, err := scales.Scales(namespace).Get(ctx, gr, "scaled", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Spec.Replicas).To(Equal(int32(1)))
		Expect(s.Status.Replicas).To(Equal(int32(1)))
		Expect(s.Status.Selector).To(Equal("operator.gnmic.dev/cluster=scaled"))

		s.Spec.Replicas = 4
		_, err = scales.Scales(namespace).Update(ctx, gr, s, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(tc.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "scaled"}, c)).To(Succeed())
		Expect(*c.Spec.Replicas).To(Equal(int32(4)))

		s.Spec.Replicas = -1
		_, err = scales.Scales(namespace).Update(ctx, gr, &autoscalingv1.Scale{ObjectMeta: s.ObjectMeta, Spec: s.Spec}, metav1.UpdateOptions{})
		Expect(err).To(HaveOccurred(), "the scale subresource must not bypass the replicas minimum")
	})
})
