package controllers_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
)

// conflictAfterApply fails, with a conflict, the first write of a Cluster's status that the reconciler makes
// once applied() passed the count given to arm: the write of a reconcile whose push succeeded.
type conflictAfterApply struct {
	applied func() int
	armedAt atomic.Int64 // -1: disarmed
	fired   atomic.Bool
}

func (c *conflictAfterApply) arm(applies int) { c.armedAt.Store(int64(applies)) }

func (c *conflictAfterApply) wrap(r *cluster.Reconciler) {
	c.armedAt.Store(-1)
	r.Client = interceptor.NewClient(cachedClient{r.Client}, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch,
			opts ...client.SubResourcePatchOption) error {
			at := c.armedAt.Load()
			if _, ok := obj.(*operatorv1alpha1.Cluster); ok && sub == "status" && at >= 0 && int64(c.applied()) > at &&
				c.fired.CompareAndSwap(false, true) {
				return apierrors.NewConflict(schema.GroupResource{Group: operatorv1alpha1.GroupVersion.Group, Resource: "clusters"},
					obj.GetName(), nil)
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

var _ = Describe("Cluster status of a collector", func() {
	var op *operator
	AfterEach(func() { op.Stop() })

	// The CA-renewal spec of "Collector TLS transports" failed about one run in two this way: the push after
	// the renewal succeeded, its status write met a conflict, and every later reconcile found the collector
	// holding the configuration already and kept the earlier push error in status.collectors for ever.
	It("drops a push error once the collector holds its configuration, even when the status write that said so met a conflict", func() {
		var f *fleet
		conflict := &conflictAfterApply{applied: func() int { return f.collectors[0].ApplyCount() }}
		op = startOperatorPolling(time.Hour, conflict.wrap)
		f = newFleet(1, nil, "")
		f.converged(0, 0)

		f.collectors[0].FailApply(http.StatusInternalServerError, "the collector is restarting")
		f.addTargets(0, 1)
		Eventually(func() string { return f.cluster().Status.Collectors[0].Error }, 10*time.Second).
			Should(ContainSubstring("the collector is restarting"))

		conflict.arm(f.collectors[0].ApplyCount())
		f.collectors[0].ClearApplyFailure()
		Eventually(conflict.fired.Load, 30*time.Second).Should(BeTrue(), "no status write after a successful push")
		Eventually(func(g Gomega) {
			st := f.cluster().Status.Collectors[0]
			g.Expect(st.Error).To(BeEmpty())
			g.Expect(st.Targets).To(BeEquivalentTo(1))
		}, 10*time.Second).Should(Succeed())
		f.converged(1, 0)
	})
})
