package sharding

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// cachedCopies are the copies of the object named key that the caches of Cluster objects of the share hold,
// whole or kept by name only, one per cache holding it.
func cachedCopies(share *shareCaches, key client.ObjectKey, newObj func() client.Object) []client.Object {
	share.mu.Lock()
	caches := slices.Concat(share.segments, share.pending)
	share.mu.Unlock()
	var out []client.Object
	for _, c := range caches {
		obj := newObj()
		err := c.cache.Get(suiteCtx, key, obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		Expect(err).NotTo(HaveOccurred())
		out = append(out, obj)
	}
	return out
}

var _ = Describe("The caches of a replica's share", func() {
	// Every team names its Cluster alike ("telemetry"), and the caches select a Cluster's objects by its name:
	// a Cluster of the same name in another namespace is selected too.
	It("hold the objects of the share's Clusters whole and those of same-named Clusters elsewhere by name only, as the share moves", func() {
		const name = "telemetry"
		var keys []types.NamespacedName
		for _, prefix := range []string{"share-a", "share-b"} {
			ns := fmt.Sprintf("%s-%d", prefix, namespaceSeq.Add(1))
			Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			labels := map[string]string{operatorv1alpha1.ClusterLabel: name}
			sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
				Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gnmic", Image: "gnmic"}}}}}}
			Expect(k8sClient.Create(suiteCtx, sts)).To(Succeed())
			keys = append(keys, types.NamespacedName{Namespace: ns, Name: name})
		}
		httpClient, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
		Expect(err).NotTo(HaveOccurred())
		share, err := newShareCaches(cfg, httpClient, scheme, mapper, testKinds(), func(types.NamespacedName) {})
		Expect(err).NotTo(HaveOccurred())
		share.consolidateAfter = time.Hour // the segments stay as the share's changes make them
		ctx, stop := context.WithCancel(suiteCtx)
		DeferCleanup(stop)
		go func() { _ = share.Start(ctx) }()
		reads := &shareClient{Client: k8sClient, share: share, live: k8sClient}
		newStatefulSet := func() client.Object { return &appsv1.StatefulSet{} }

		for _, step := range []struct {
			what        string
			held, other types.NamespacedName
		}{
			{"the share holds the first Cluster", keys[0], keys[1]},
			{"the share moves to the second Cluster", keys[1], keys[0]},
		} {
			By(step.what)
			share.setShare([]types.NamespacedName{step.held})
			Eventually(func() bool { return share.covers(step.held) }, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
			Expect(share.covers(step.other)).To(BeFalse())

			var sts appsv1.StatefulSet
			Expect(reads.Get(suiteCtx, step.held, &sts)).To(Succeed())
			Expect(sts.Spec.Replicas).NotTo(BeNil(), "the share's own Cluster %s is read only by name", step.held)
			Expect(apierrors.IsNotFound(reads.Get(suiteCtx, step.other, &sts))).To(BeTrue(),
				"the Cluster %s outside the share is read", step.other)

			held := cachedCopies(share, step.held, newStatefulSet)
			Expect(held).NotTo(BeEmpty())
			Expect(slices.ContainsFunc(held, func(o client.Object) bool { return o.(*appsv1.StatefulSet).Spec.Replicas != nil })).
				To(BeTrue(), "no cache holds the share's Cluster %s whole", step.held)
			others := cachedCopies(share, step.other, newStatefulSet)
			Expect(others).NotTo(BeEmpty(), "the same-named Cluster %s is not held even by name", step.other)
			for _, c := range others {
				Expect(c.GetLabels()).To(HaveKeyWithValue(operatorv1alpha1.ClusterLabel, name))
				Expect(c.(*appsv1.StatefulSet).Spec.Replicas).To(BeNil(), "the Cluster %s outside the share is held whole", step.other)
			}
		}
	})
})
