package controllers_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
)

// heldStatusWrites holds the reconciler's Target status writes that set an entry, once closed, until it is opened again (or the
// write's context ends): a slow API server, or a client at its rate limit, for as long as a spec wants.
type heldStatusWrites struct {
	mu      sync.Mutex
	gate    chan struct{} // nil: writes pass
	waiting atomic.Int64
}

func (h *heldStatusWrites) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gate = make(chan struct{})
}

func (h *heldStatusWrites) open() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

func (h *heldStatusWrites) wrap(r *cluster.Reconciler) {
	r.Client = interceptor.NewClient(cachedClient{r.Client}, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch,
			opts ...client.SubResourcePatchOption) error {
			if obj.GetObjectKind().GroupVersionKind().Kind == "Target" && setsEntry(patch) {
				h.mu.Lock()
				gate := h.gate
				h.mu.Unlock()
				if gate != nil {
					h.waiting.Add(1)
					select {
					case <-gate:
					case <-ctx.Done():
						h.waiting.Add(-1)
						return ctx.Err()
					}
					h.waiting.Add(-1)
				}
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

// setsEntry tells whether a Target status patch sets some Cluster's entry: not one that removes it.
func setsEntry(patch client.Patch) bool {
	data, err := patch.Data(nil)
	Expect(err).NotTo(HaveOccurred())
	var p struct {
		Status struct {
			ClusterStates map[string]*json.RawMessage `json:"clusterStates"`
		} `json:"status"`
	}
	Expect(json.Unmarshal(data, &p)).To(Succeed())
	for _, entry := range p.Status.ClusterStates {
		if entry != nil && string(*entry) != "null" {
			return true
		}
	}
	return false
}

var _ = Describe("Target status writes under way", func() {
	var (
		op   *operator
		held *heldStatusWrites
		f    *fleet
	)
	BeforeEach(func() {
		held = &heldStatusWrites{}
		op = startOperatorPolling(2*time.Second, held.wrap)
		f = newFleet(1, nil, "")
		f.addTargets(0, 40)
		f.converged(40, 0)
	})
	AfterEach(func() {
		held.open()
		op.Stop()
	})

	// A bulk arrival's statuses are thousands of writes at the client's rate: seconds during which the
	// collectors would otherwise wait for their next batch.
	It("hold back no push: a Target created meanwhile is collected while they wait", func() {
		held.close()
		for i := range 40 {
			f.collectors[0].SetConnectionState(targetName(i), "TRANSIENT_FAILURE")
		}
		Eventually(held.waiting.Load, 20*time.Second).Should(BeNumerically(">=", 1), "status writes of the 40 entries that changed")

		f.addTargets(40, 1)
		Eventually(f.collectors[0].Targets, 5*time.Second, 50*time.Millisecond).Should(ContainElement(targetName(40)),
			"the new Target was not pushed while the earlier status writes waited")

		held.open()
		Eventually(func(g Gomega) {
			states := f.statuses()
			g.Expect(states).To(HaveLen(41))
			for i := range 40 {
				g.Expect(states[targetName(i)].ConnectionState).To(Equal("TRANSIENT_FAILURE"), targetName(i))
			}
			g.Expect(states[targetName(40)].State).To(Equal(operatorv1alpha1.TargetAssigned))
			g.Expect(states[targetName(40)].Collecting).To(BeTrue())
		}, 20*time.Second).Should(Succeed())
	})

	It("leave no entry of a Cluster deleted while they wait", func() {
		held.close()
		// New Targets without an entry yet: the removal of a deleted Cluster's entries does not touch them,
		// so their writes' lock on the resourceVersion does not stop them either.
		f.addTargets(40, 10)
		// The first batch holds those collecting at its pass; the others wait for it to end.
		Eventually(held.waiting.Load, 20*time.Second).Should(BeNumerically(">=", 1), "the new Targets' first status writes")

		Expect(k8sClient.Delete(suiteCtx, f.cluster())).To(Succeed())
		noEntries := func(g Gomega) {
			var list operatorv1alpha1.TargetList
			g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
			for _, t := range list.Items {
				g.Expect(t.Status.ClusterStates).NotTo(HaveKey(f.name), t.Name)
			}
		}
		Eventually(noEntries, 20*time.Second).Should(Succeed())
		Expect(held.waiting.Load()).To(BeZero(), "writes still waiting after the Cluster's entries were removed")
		held.open()
		Consistently(noEntries, 3*time.Second, 250*time.Millisecond).Should(Succeed())
	})
})
