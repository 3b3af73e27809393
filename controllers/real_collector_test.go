package controllers_test

import (
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// These specs run the collectors the way the real gNMIc collector behaves (shared/gnmic-api.md, "Measured
// against the real collector"): applies acknowledged before they are acted on, target changes worked off one
// at a time, changes beyond a 128-entry buffer dropped without an error.
var _ = Describe("Cluster reconciler with collectors that behave like gNMIc", func() {
	var op *operator
	AfterEach(func() { op.Stop() })

	It("runs all 300 targets of one pod although the collector acts on at most 128 changes, and never reports one it does not run", func() {
		f := newFleetOf(1, fakecollector.Realistic())
		col := f.collectors[0]
		// All 300 exist before the operator first looks, as after one `kubectl apply` of 300 Targets.
		f.addTargets(0, 300)
		op = startOperator()
		watch := watchTargetStatuses(f, func(name string, st operatorv1alpha1.TargetClusterState) string {
			_, runs := col.TargetStatus(name)
			switch {
			case st.State == operatorv1alpha1.TargetAssigned && !runs:
				return "Assigned while its collector does not run it"
			case st.Collecting && !runs:
				return "collecting while its collector does not run it"
			case st.ConnectionState == "READY" && !runs:
				return "READY while its collector does not run it"
			}
			return ""
		})
		f.converged(300, 0)
		f.collecting(300)
		Expect(watch.stop()).To(BeEmpty(), "Target status claimed what the collector did not do")

		Expect(col.Dropped()).To(BeZero(), "the operator overflowed the collector's change buffer")
		for _, a := range col.Applied() {
			changes := len(a.Changes.Targets.Added) + len(a.Changes.Targets.Removed) + len(a.Changes.Targets.Changed)
			Expect(changes).To(BeNumerically("<=", cluster.DefaultBatchSize), "one apply carried %d target changes", changes)
		}
		GinkgoWriter.Printf("300 targets reached the collector in %d applies\n", col.ApplyCount())
		Expect(col.ApplyCount()).To(BeNumerically(">=", 3))
		c := f.cluster()
		Expect(condition(c, operatorv1alpha1.ConditionConfigApplied).Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Status.Collectors[0].Running).To(BeEquivalentTo(300))
		Expect(f.configured(0).Status).To(Equal(corev1.ConditionTrue))
	})

	It("repairs the targets a collector dropped, and says so", func() {
		// A buffer of 40 with batches of 100: most of a full batch is dropped, as gNMIc drops what overflows. The
		// targets exist before the operator starts, so that its first push is a full batch: created while it
		// runs, they may reach the collector in batches of fewer than 40, which drop nothing.
		f := newFleetOf(1, fakecollector.WithChangeQueue(40, time.Millisecond))
		f.addTargets(0, 150)
		op = startOperatorPolling(2*time.Second, func(r *cluster.Reconciler) {
			r.BatchSize = 100
			r.RepairAfter = time.Second
		})
		f.converged(150, 0)
		f.collecting(150)
		Expect(f.collectors[0].Dropped()).To(BeNumerically(">", 0), "nothing was dropped: the spec proves no repair")
		Eventually(func() []string { return f.events(operatorv1alpha1.EventTargetsRepaired) }, 5*time.Second).NotTo(BeEmpty())
	})

	It("moves targets off a busy collector only once it stopped running them", func() {
		op = startOperator()
		f := newFleetOf(1, fakecollector.Realistic())
		f.addTargets(0, 20)
		f.converged(20, 0)
		old := f.collectors[0]
		// A device that never completes its handshake holds the collector's every later change for 3 s.
		old.Blackhole(targetName(20), 3*time.Second)
		f.addTargets(20, 1)
		Eventually(old.ConfiguredTargets, 10*time.Second, 10*time.Millisecond).Should(ContainElement(targetName(20)))

		busySince := time.Now()
		f.scale(2)
		f.addPod(1)
		twice := sampleOverlaps(10*time.Millisecond, old, f.collectors[1])
		Eventually(func() int { return len(f.collectors[1].Targets()) }, 20*time.Second).Should(BeNumerically(">", 0))
		firstMove := time.Since(busySince)
		old.ClearBlackhole(targetName(20))
		f.converged(21, 0)
		Expect(twice.stop()).To(BeEmpty(), "targets ran on two collectors at once")
		GinkgoWriter.Printf("the new pod got its first target %v after the old collector became busy\n", firstMove)
		Expect(firstMove).To(BeNumerically(">=", 2*time.Second), "the move did not wait for the busy collector")
		Expect(f.events(operatorv1alpha1.EventHandoverOverlap)).To(BeEmpty())
	})

	It("refuses a Subscription with history, which the collector cannot take, and keeps configuring the rest", func() {
		op = startOperator()
		f := newFleetOf(2, fakecollector.Realistic())
		sub := &operatorv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "past", Namespace: f.ns},
			Spec: operatorv1alpha1.SubscriptionSpec{Paths: []string{"/system"},
				History: &operatorv1alpha1.SubscriptionHistory{Snapshot: ptrTime(time.Now().Add(-time.Hour))}}}
		err := k8sClient.Create(suiteCtx, sub)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("history is not supported"))
		f.addTargets(0, 10)
		f.converged(10, 0)
		f.collecting(10)
	})

	It("sends a profile's gRPC keepalive to the collectors", func() {
		op = startOperator()
		f := newFleetOf(1, fakecollector.Realistic())
		var profile operatorv1alpha1.TargetProfile
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "routers"}, &profile)).To(Succeed())
		profile.Spec.GRPCKeepalive = &operatorv1alpha1.GRPCKeepalive{Time: &metav1.Duration{Duration: 30 * time.Second},
			Timeout: &metav1.Duration{Duration: 10 * time.Second}, PermitWithoutStream: true}
		Expect(k8sClient.Update(suiteCtx, &profile)).To(Succeed())
		f.addTargets(0, 2)
		f.converged(2, 0)
		Eventually(func(g Gomega) {
			last, ok := f.collectors[0].LastApplied()
			g.Expect(ok).To(BeTrue())
			g.Expect(last.Config.Targets).To(HaveKey(targetName(0)))
			g.Expect(last.Config.Targets[targetName(0)]["grpc-keepalive"]).To(Equal(map[string]any{
				"time": "30s", "timeout": "10s", "permit-without-stream": true}))
		}, 10*time.Second).Should(Succeed())
	})

	It("shows a subscription the device stopped in Target status, and that nothing is collected", func() {
		op = startOperator()
		f := newFleetOf(1, fakecollector.Realistic())
		f.addTargets(0, 2)
		f.converged(2, 0)
		f.collecting(2)
		f.collectors[0].EndSubscription(targetName(1), "counters", "rpc error: code = Unavailable desc = stream ended")
		Eventually(func(g Gomega) {
			st := f.targetState(g, targetName(1))
			g.Expect(st.State).To(Equal(operatorv1alpha1.TargetAssigned))
			g.Expect(st.ConnectionState).To(Equal("READY"))
			g.Expect(st.Collecting).To(BeFalse())
			g.Expect(st.Message).To(Equal("subscription counters stopped: rpc error: code = Unavailable desc = stream ended"))
		}, 15*time.Second).Should(Succeed())
		f.collectors[0].ResumeSubscription(targetName(1), "counters")
		f.collecting(2)
	})
})

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}

// collecting waits until the statuses of all n targets say their collectors collect them.
func (f *fleet) collecting(n int) {
	Eventually(func(g Gomega) {
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		for _, t := range list.Items {
			st := t.Status.ClusterStates[f.name]
			g.Expect(st.State).To(Equal(operatorv1alpha1.TargetAssigned), "target %s", t.Name)
			g.Expect(st.Collecting).To(BeTrue(), "target %s: %s", t.Name, st.Message)
			g.Expect(st.Message).To(BeEmpty(), "target %s", t.Name)
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
}

// targetState is the target's entry for the fleet's Cluster.
func (f *fleet) targetState(g Gomega, name string) operatorv1alpha1.TargetClusterState {
	var t operatorv1alpha1.Target
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: name}, &t)).To(Succeed())
	return t.Status.ClusterStates[f.name]
}

// events are the messages of the Cluster's events with the reason.
func (f *fleet) events(reason string) []string {
	var list corev1.EventList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Reason == reason && e.InvolvedObject.Name == f.name {
			out = append(out, e.Message)
		}
	}
	return out
}

// sampler checks something in the background until stopped, and collects what it found wrong.
type sampler struct {
	done     chan struct{}
	finished sync.WaitGroup
	mu       sync.Mutex
	found    []string
}

func sample(every time.Duration, check func() []string) *sampler {
	s := &sampler{done: make(chan struct{})}
	s.finished.Add(1)
	go func() {
		defer GinkgoRecover()
		defer s.finished.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tick.C:
				if found := check(); len(found) > 0 {
					s.mu.Lock()
					s.found = append(s.found, found...)
					s.mu.Unlock()
				}
			}
		}
	}()
	return s
}

// stop ends the sampling and returns what it found, at most 20 findings.
func (s *sampler) stop() []string {
	close(s.done)
	s.finished.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.found[:min(len(s.found), 20)]
}

// sampleOverlaps records every target that two of the collectors run at once.
func sampleOverlaps(every time.Duration, cols ...*fakecollector.Collector) *sampler {
	return sample(every, func() []string {
		on := map[string]int{}
		var twice []string
		for _, c := range cols {
			for _, name := range c.Targets() {
				if on[name]++; on[name] == 2 {
					twice = append(twice, name)
				}
			}
		}
		return twice
	})
}

// watchTargetStatuses checks every Target status of the fleet as it is written, against judge.
func watchTargetStatuses(f *fleet, judge func(name string, st operatorv1alpha1.TargetClusterState) string) *sampler {
	return sample(50*time.Millisecond, func() []string {
		var list operatorv1alpha1.TargetList
		if err := k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns)); err != nil {
			return nil
		}
		var wrong []string
		for _, t := range list.Items {
			st, ok := t.Status.ClusterStates[f.name]
			if !ok {
				continue
			}
			if why := judge(t.Name, st); why != "" {
				wrong = append(wrong, t.Name+": "+why)
			}
		}
		return wrong
	})
}

var _ = Describe("Cluster reconciler, when a collector loses its configuration behind the operator's back", func() {
	It("sends it its targets again, in batches, and says so", func() {
		op := startOperatorPolling(2*time.Second, func(r *cluster.Reconciler) { r.RepairAfter = time.Second })
		defer op.Stop()
		f := newFleetOf(1, fakecollector.Realistic())
		f.addTargets(0, 120)
		f.converged(120, 0)
		f.collecting(120)

		// (120: a reset of more than 128 targets would itself overflow the collector's buffer and leave some
		// running.) Someone resets the collector (or its process restarts inside the same container): it runs nothing,
		// and the pod's status shows no container restart.
		resp, err := f.operatorHTTPClient(0).Post(f.collectors[0].URL()+"/api/v1/config/apply", "application/json", strings.NewReader("{}"))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		resp.Body.Close()
		Eventually(f.collectors[0].Targets, 5*time.Second).Should(BeEmpty())

		// Target statuses may still show the state from before the reset: wait on the collector itself.
		Eventually(f.collectors[0].Targets, 30*time.Second).Should(HaveLen(120))
		f.collecting(120)
		Expect(f.collectors[0].Dropped()).To(BeZero())
		Eventually(func() []string { return f.events(operatorv1alpha1.EventTargetsRepaired) }, 5*time.Second).NotTo(BeEmpty())
	})
})

var _ = Describe("Cluster reconciler, when a pod terminates with its collector still running", func() {
	It("starts the pod's targets elsewhere only once its collector stops, or after the drop timeout", func() {
		op := startOperatorPolling(2*time.Second, func(r *cluster.Reconciler) { r.DropTimeout = 4 * time.Second })
		defer op.Stop()
		f := newFleet(2, nil, "")
		f.addTargets(0, 10)
		held := f.converged(10, 0)
		Expect(held[1]).NotTo(BeEmpty())

		// A finalizer stands in for the pod's termination grace period: deleted, it stays, and its collector
		// keeps running its targets.
		const finalizer = "test.gnmic.dev/terminating"
		// The operator patches the pod's readiness gate meanwhile: a conflict means read again and retry.
		setFinalizers := func(finalizers []string) error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				p := f.pod(1)
				p.Finalizers = finalizers
				return k8sClient.Update(suiteCtx, p)
			})
		}
		Expect(setFinalizers(append(f.pod(1).Finalizers, finalizer))).To(Succeed())
		DeferCleanup(func() {
			Expect(setFinalizers(nil)).To(Succeed())
		})
		Expect(k8sClient.Delete(suiteCtx, f.pod(1))).To(Succeed())
		Eventually(func() bool { return f.pod(1).DeletionTimestamp != nil }, 5*time.Second).Should(BeTrue())
		f.scale(1)

		Consistently(func() []string { return f.collectors[0].Targets() }, 3*time.Second, 50*time.Millisecond).
			Should(ConsistOf(held[0]), "targets started on pod 0 while the terminating pod's collector ran them")
		Eventually(func() []string { return f.collectors[0].Targets() }, 15*time.Second).Should(HaveLen(10))
		Eventually(func() []string { return f.events(operatorv1alpha1.EventHandoverOverlap) }, 5*time.Second).NotTo(BeEmpty())
	})
})
