package sharding

import (
	"context"
	"fmt"
	"reflect"
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

// sameMap is true when a and b are one map, not equal copies.
func sameMap(a, b map[string]string) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

var _ = Describe("Reads without copies through the share's client", func() {
	// The Cluster reconciler lists a namespace's Targets and its Cluster's objects with
	// client.UnsafeDisableDeepCopy where it only reads (docs/development.md, "Reading from the cache").
	It("give the share's cached objects themselves, and copies without the option", func() {
		const name = "telemetry"
		ns := fmt.Sprintf("nocopy-%d", namespaceSeq.Add(1))
		Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		labels := map[string]string{operatorv1alpha1.ClusterLabel: name}
		Expect(k8sClient.Create(suiteCtx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gnmic", Image: "gnmic"}}}}}})).To(Succeed())
		Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r1",
			Labels: map[string]string{"site": "a"}}, Spec: operatorv1alpha1.TargetSpec{Address: "10.0.0.1:57400", Profile: "routers"}})).To(Succeed())

		httpClient, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
		Expect(err).NotTo(HaveOccurred())
		share, err := newShareCaches(cfg, httpClient, scheme, mapper, testKinds(), func(types.NamespacedName) {})
		Expect(err).NotTo(HaveOccurred())
		ctx, stop := context.WithCancel(suiteCtx)
		DeferCleanup(stop)
		go func() { _ = share.Start(ctx) }()
		key := types.NamespacedName{Namespace: ns, Name: name}
		share.setShare([]types.NamespacedName{key})
		Eventually(func() bool { return share.covers(key) }, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
		reads := &shareClient{Client: k8sClient, share: share, live: k8sClient}

		for _, read := range []struct {
			what string
			list func(opts ...client.ListOption) map[string]string
		}{
			{"the Targets of a namespace (its cache of Targets)", func(opts ...client.ListOption) map[string]string {
				var l operatorv1alpha1.TargetList
				Expect(reads.List(suiteCtx, &l, append(opts, client.InNamespace(ns))...)).To(Succeed())
				Expect(l.Items).To(HaveLen(1))
				return l.Items[0].Labels
			}},
			{"the Targets of every namespace of the share", func(opts ...client.ListOption) map[string]string {
				var l operatorv1alpha1.TargetList
				Expect(reads.List(suiteCtx, &l, opts...)).To(Succeed())
				Expect(l.Items).To(HaveLen(1))
				return l.Items[0].Labels
			}},
			{"a Cluster's StatefulSets (the segments)", func(opts ...client.ListOption) map[string]string {
				var l appsv1.StatefulSetList
				Expect(reads.List(suiteCtx, &l, append(opts, client.InNamespace(ns))...)).To(Succeed())
				Expect(l.Items).To(HaveLen(1))
				return l.Items[0].Labels
			}},
			{"a Cluster's StatefulSet by name (the segments)", func(opts ...client.ListOption) map[string]string {
				var sts appsv1.StatefulSet
				var get []client.GetOption
				if len(opts) > 0 {
					get = append(get, client.UnsafeDisableDeepCopy)
				}
				Expect(reads.Get(suiteCtx, key, &sts, get...)).To(Succeed())
				return sts.Labels
			}},
		} {
			By(read.what)
			Expect(sameMap(read.list(client.UnsafeDisableDeepCopy), read.list(client.UnsafeDisableDeepCopy))).To(BeTrue(),
				"two reads without copies give two copies")
			Expect(sameMap(read.list(), read.list(client.UnsafeDisableDeepCopy))).To(BeFalse(), "a read with copies gives the cache's object")
		}
	})
})
