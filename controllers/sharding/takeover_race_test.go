package sharding

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// racingStatus writes the Cluster's status once, through race, just before the first status patch it
// relays: that patch then carries a stale resourceVersion and the API server refuses it (409).
type racingStatus struct {
	client.Client
	race func()
	once sync.Once
}

func (c *racingStatus) Status() client.SubResourceWriter {
	return racingStatusWriter{SubResourceWriter: c.Client.Status(), c: c}
}

type racingStatusWriter struct {
	client.SubResourceWriter
	c *racingStatus
}

func (w racingStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	w.c.once.Do(w.c.race)
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// takeOverAsAssigned runs the takeover of cluster, as last read, by a ready replica named identity whose last
// assignment round gave it the Cluster. c writes the takeover and serves as the replica's cache.
func takeOverAsAssigned(c client.Client, identity string, cluster *operatorv1alpha1.Cluster) error {
	s := newMember(Options{Identity: identity, LeaseDuration: time.Minute}, nil, c)
	s.writer, s.recorder = c, record.NewFakeRecorder(16)
	s.self = shard.Lease{Holder: identity, RenewTime: time.Now(), Duration: time.Minute}
	s.desired[types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}.String()] = identity
	return s.takeOver(suiteCtx, cluster)
}

var _ = Describe("A takeover that races another write of the Cluster's status", func() {
	var cluster *operatorv1alpha1.Cluster

	BeforeEach(func() {
		ns := fmt.Sprintf("takeover-race-%d", namespaceSeq.Add(1))
		Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		cluster = &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "raced"}}
		cluster.Spec.Image = "ghcr.io/openconfig/gnmic:test"
		Expect(k8sClient.Create(suiteCtx, cluster)).To(Succeed())
		// No operator reconciles it here; one that runs in a later spec must not find it.
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, cluster))).To(Succeed()) })
	})

	writeStatus := func(change func(*operatorv1alpha1.Cluster)) func() {
		return func() {
			defer GinkgoRecover()
			var current operatorv1alpha1.Cluster
			Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(cluster), &current)).To(Succeed())
			change(&current)
			Expect(k8sClient.Status().Update(suiteCtx, &current)).To(Succeed())
		}
	}
	shardOf := func() *operatorv1alpha1.ClusterShard {
		var current operatorv1alpha1.Cluster
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(cluster), &current)).To(Succeed())
		return current.Status.Shard
	}

	// At 300 Clusters a third of a dead member's takeovers met such a write (a drain, a status update) and
	// waited for the next assignment round: 2 s more than the lease duration allows.
	It("reads the Cluster afresh and takes it over at once when it still should", func() {
		raced := &racingStatus{Client: k8sClient, race: writeStatus(func(c *operatorv1alpha1.Cluster) { c.Status.TargetsCount = 7 })}
		Expect(takeOverAsAssigned(raced, "replica-a", cluster.DeepCopy())).To(Succeed())
		shard := shardOf()
		Expect(shard).NotTo(BeNil(), "the conflicted takeover was not written again")
		Expect(shard.Owner).To(Equal("replica-a"))
		Expect(shard.Generation).To(BeEquivalentTo(1))
	})

	It("gives way when the racing write is another replica's takeover", func() {
		raced := &racingStatus{Client: k8sClient, race: writeStatus(func(c *operatorv1alpha1.Cluster) {
			c.Status.Shard = &operatorv1alpha1.ClusterShard{Owner: "replica-b", Generation: 1, Since: &metav1.Time{Time: time.Now()}}
		})}
		Expect(takeOverAsAssigned(raced, "replica-a", cluster.DeepCopy())).To(Succeed())
		shard := shardOf()
		Expect(shard.Owner).To(Equal("replica-b"), "a live replica's takeover was overwritten")
		Expect(shard.Generation).To(BeEquivalentTo(1))
	})
})
