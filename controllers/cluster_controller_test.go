package controllers_test

import (
	"crypto/tls"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
)

var _ = Describe("Cluster reconciler", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	It("creates the collector StatefulSet with the pod selector the scale subresource reports", func() {
		f := newFleet(1, nil, "")
		Eventually(func(g Gomega) {
			var sts appsv1.StatefulSet
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name}, &sts)).To(Succeed())
			g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(map[string]string{operatorv1alpha1.ClusterLabel: f.name}))
			g.Expect(f.cluster().Status.Selector).To(Equal(operatorv1alpha1.ClusterLabel + "=" + f.name))
		}, 20*time.Second).Should(Succeed())
	})

	It("spreads 9 targets over 3 pods evenly, each on exactly one collector, and says where", func() {
		f := newFleet(3, nil, "")
		f.addTargets(0, 9)
		held := f.converged(9, 0)
		Expect(loads(held)).To(Equal([]int{3, 3, 3}))
		c := f.cluster()
		Expect(c.Status.ReadyReplicas).To(BeEquivalentTo(3))
		Expect(condition(c, operatorv1alpha1.ConditionCapacityExhausted).Status).To(Equal(metav1.ConditionFalse))
		// ConfigApplied turns True once a read of the collectors shows them running everything: a reconcile
		// after the holdings converged.
		Eventually(func() metav1.ConditionStatus {
			return condition(f.cluster(), operatorv1alpha1.ConditionConfigApplied).Status
		}, 10*time.Second).Should(Equal(metav1.ConditionTrue))
		var collected int32
		for _, col := range c.Status.Collectors {
			collected += col.Targets
		}
		Expect(collected).To(BeEquivalentTo(9))
		Expect(c.Status.PodStatuses).To(Equal(map[string][]string{operatorv1alpha1.PodReady: {"fleet-0", "fleet-1", "fleet-2"}}))
		Expect(c.Status.Summary).To(Equal("3/3 pods ready, 9 targets, 0 unassigned"))

		Eventually(func(g Gomega) {
			var p operatorv1alpha1.Pipeline
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "all"}, &p)).To(Succeed())
			g.Expect(p.Status.TargetsCount).To(BeEquivalentTo(9))
			g.Expect(p.Status.SubscriptionsCount).To(BeEquivalentTo(1))
			g.Expect(p.Status.OutputsCount).To(BeEquivalentTo(1))
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, operatorv1alpha1.ConditionReady)).To(BeTrue())
		}, 10*time.Second).Should(Succeed())
	})

	It("reports a Pipeline reference that names nothing", func() {
		f := newFleet(1, nil, "")
		p := &operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "ghostly", Namespace: f.ns},
			Spec: operatorv1alpha1.PipelineSpec{ClusterRef: f.name, TargetRefs: []string{"ghost"}, SubscriptionRefs: []string{"counters"}}}
		Expect(k8sClient.Create(suiteCtx, p)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			cond := meta.FindStatusCondition(p.Status.Conditions, operatorv1alpha1.ConditionReady)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal("ReferencesNotFound"))
			g.Expect(cond.Message).To(ContainSubstring(`"ghost"`))
		}, 10*time.Second).Should(Succeed())
	})

	It("leaves targets beyond replicas × podCapacity unassigned and says so, until the fleet grows", func() {
		f := newFleet(3, ptr.To(int32(2)), "")
		f.addTargets(0, 9)
		f.converged(9, 3)
		cond := condition(f.cluster(), operatorv1alpha1.ConditionCapacityExhausted)
		Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonInsufficientCapacity))
		Expect(cond.Message).To(Equal("3 target(s) could not be assigned, all pods at capacity"))

		f.scale(5)
		f.addPod(3)
		f.addPod(4)
		f.converged(9, 0)
		cond = condition(f.cluster(), operatorv1alpha1.ConditionCapacityExhausted)
		Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonSufficientCapacity))
	})

	It("moves only what capacity forces when scaling 1→3, 2→3 and 3→2, and never re-adds a target that stays", func() {
		f := newFleet(1, nil, "")
		f.addTargets(0, 12)
		f.converged(12, 0)

		f.scale(3)
		f.addPod(1)
		f.addPod(2)
		held := f.converged(12, 0)
		Expect(loads(held)).To(Equal([]int{4, 4, 4}))

		f.scale(2)
		f.removePod(2)
		before := f.statusPods()
		held = f.converged(12, 0)
		Expect(loads(held)).To(Equal([]int{6, 6}))
		for name, pod := range f.statusPods() {
			if before[name] != f.podName(2) {
				Expect(pod).To(Equal(before[name]), "target %s was on a surviving pod and moved", name)
			}
		}

		mid := f.statusPods()
		f.scale(3)
		f.addPod(2)
		held = f.converged(12, 0)
		Expect(loads(held)).To(Equal([]int{4, 4, 4}))
		moved := 0
		for name, pod := range f.statusPods() {
			if pod != mid[name] {
				moved++
			}
		}
		// 2→3 with 12 targets: capacity 4, each surviving pod sheds 2: the lower bound is 4.
		Expect(moved).To(Equal(4))
		for ordinal := 0; ordinal < 2; ordinal++ {
			for _, name := range held[ordinal] {
				counts := f.collectors[ordinal].Counts(name)
				Expect(counts.Removed).To(BeZero(), "target %s stayed on pod %d but was removed", name, ordinal)
			}
		}
	})

	It("pushes a recreated pod its configuration again, on the same targets", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 6)
		held := f.converged(6, 0)
		f.removePod(0)
		f.addPod(0)
		again := f.converged(6, 0)
		Expect(again[0]).To(Equal(held[0]), "the recreated pod within its grace period keeps its targets")
		Expect(f.collectors[0].ApplyCount()).To(BeNumerically(">=", 1))
	})

	It("pushes a restarted collector container its configuration again", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 6)
		held := f.converged(6, 0)
		Expect(held[1]).NotTo(BeEmpty())
		f.restartContainer(1)
		Eventually(func() []string { return f.collectors[1].Targets() }, 10*time.Second).Should(Equal(held[1]))
		Eventually(func() int32 {
			for _, c := range f.cluster().Status.Collectors {
				if c.Pod == f.podName(1) {
					return c.Restarts
				}
			}
			return -1
		}, 5*time.Second).Should(BeEquivalentTo(1))
		Expect(f.holdings()[0]).To(Equal(held[0]), "the other pod is left alone")
	})

	It("rolls out an image change to the StatefulSet", func() {
		f := newFleet(1, nil, "")
		c := f.cluster()
		c.Spec.Image = "ghcr.io/openconfig/gnmic:next"
		Expect(k8sClient.Update(suiteCtx, c)).To(Succeed())
		Eventually(func(g Gomega) {
			var sts appsv1.StatefulSet
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name}, &sts)).To(Succeed())
			g.Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("ghcr.io/openconfig/gnmic:next"))
		}, 10*time.Second).Should(Succeed())
	})

	It("removes its entry from a Target it no longer selects, and from all Targets when it is deleted", func() {
		f := newFleet(1, nil, "")
		f.addTargets(0, 2)
		f.converged(2, 0)
		var t operatorv1alpha1.Target
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: targetName(0)}, &t)).To(Succeed())
		t.Labels = nil
		Expect(k8sClient.Update(suiteCtx, &t)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&t), &t)).To(Succeed())
			g.Expect(t.Status.ClusterStates).NotTo(HaveKey(f.name))
			g.Expect(f.collectors[0].Targets()).To(Equal([]string{targetName(1)}))
		}, 10*time.Second).Should(Succeed())

		Expect(k8sClient.Delete(suiteCtx, f.cluster())).To(Succeed())
		Eventually(func(g Gomega) {
			var other operatorv1alpha1.Target
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: targetName(1)}, &other)).To(Succeed())
			g.Expect(other.Status.ClusterStates).NotTo(HaveKey(f.name))
			g.Expect(other.Status.State).To(BeEmpty())
		}, 10*time.Second).Should(Succeed())
	})

	It("moves no other target when one is added, and only what the capacity requires when one is removed", func() {
		f := newFleet(3, nil, "")
		f.addTargets(0, 9)
		f.converged(9, 0)
		before := f.statusPods()
		f.addTargets(9, 1)
		f.converged(10, 0)
		for name, pod := range f.statusPods() {
			if name != targetName(9) {
				Expect(pod).To(Equal(before[name]), "adding a target moved %s", name)
			}
		}
		// Removing one brings the capacity back to ceil(9/3) = 3: a pod left with more than 3 (the one that took
		// target 9, unless target 4 was on it) sheds its excess, and nothing else moves.
		added := f.statusPods()
		f.deleteTarget(4)
		f.converged(9, 0)
		left := map[string]int{}
		for name, pod := range added {
			if name != targetName(4) {
				left[pod]++
			}
		}
		excess := 0
		for _, n := range left {
			excess += max(0, n-3)
		}
		moved := 0
		for name, pod := range f.statusPods() {
			if pod != added[name] {
				moved++
				Expect(left[added[name]]).To(BeNumerically(">", 3), "removing a target moved %s off a pod within capacity", name)
			}
		}
		Expect(moved).To(Equal(excess), "targets moved when one was removed")
	})

	It("moves and pushes nothing when the operator restarts", func() {
		f := newFleet(3, nil, "")
		f.addTargets(0, 9)
		f.converged(9, 0)
		before := f.statusPods()
		applies := map[int]int{}
		for o, col := range f.collectors {
			applies[o] = col.ApplyCount()
		}
		op.Stop()
		op = startOperator()
		Consistently(func(g Gomega) {
			for o, col := range f.collectors {
				g.Expect(col.ApplyCount()).To(Equal(applies[o]), "pod %d was pushed again", o)
			}
			g.Expect(f.statusPods()).To(Equal(before))
		}, 4*time.Second, 250*time.Millisecond).Should(Succeed())
	})

	It("keeps an unready pod's targets for the grace period, then places them elsewhere, without delaying other pods", func() {
		f := newFleet(3, nil, "3s")
		f.addTargets(0, 9)
		held := f.converged(9, 0)
		f.setReady(2, false)
		f.addTargets(9, 3)
		// The new targets reach the ready pods while pod 2 is unready.
		Eventually(func() int { return len(f.collectors[0].Targets()) + len(f.collectors[1].Targets()) }, 10*time.Second).
			Should(Equal(9))
		Expect(f.statusPods()[held[2][0]]).To(Equal(f.podName(2)), "within the grace period the target stays")
		Eventually(func() []string { return f.cluster().Status.PodStatuses[operatorv1alpha1.PodHolding] }, 5*time.Second).
			Should(Equal([]string{f.podName(2)}))

		Eventually(func(g Gomega) {
			pods := f.statusPods()
			for _, name := range held[2] {
				g.Expect(pods[name]).NotTo(Equal(f.podName(2)))
			}
		}, 15*time.Second, 200*time.Millisecond).Should(Succeed())
		Expect(len(f.collectors[0].Targets()) + len(f.collectors[1].Targets())).To(Equal(12))
	})

	It("releases the targets of a pod that stays missing once its grace period ends", func() {
		// A StatefulSet may not recreate a pod for long: OrderedReady waits for a lower ordinal, a quota or
		// an admission webhook refuses it. The grace period counts from when the pod was first seen missing.
		f := newFleet(3, nil, "3s")
		f.addTargets(0, 9)
		held := f.converged(9, 0)
		f.removePod(2)
		Eventually(func(g Gomega) {
			pods := f.statusPods()
			for _, name := range held[2] {
				g.Expect(pods[name]).NotTo(Equal(f.podName(2)), "target %s still waits for the missing pod", name)
			}
		}, 15*time.Second, 200*time.Millisecond).Should(Succeed())
		Expect(len(f.collectors[0].Targets()) + len(f.collectors[1].Targets())).To(Equal(9))
	})

	It("reports a collector that refuses its configuration, retries it, and keeps configuring the others", func() {
		f := newFleet(3, nil, "")
		f.collectors[1].FailApply(http.StatusInternalServerError)
		f.addTargets(0, 9)
		Eventually(func(g Gomega) {
			cond := condition(f.cluster(), operatorv1alpha1.ConditionConfigApplied)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Message).To(ContainSubstring(f.podName(1)))
			g.Expect(cond.Message).NotTo(ContainSubstring(f.podName(0)))
			g.Expect(len(f.collectors[0].Targets()) + len(f.collectors[2].Targets())).To(BeNumerically(">", 0))
		}, 20*time.Second).Should(Succeed())

		f.collectors[1].ClearApplyFailure()
		f.converged(9, 0)
		Eventually(func() metav1.ConditionStatus {
			return condition(f.cluster(), operatorv1alpha1.ConditionConfigApplied).Status
		}, 30*time.Second).Should(Equal(metav1.ConditionTrue))
	})

	It("restarts a target whose start failed until it collects", func() {
		f := newFleet(1, nil, "")
		f.collectors[0].FailStart(targetName(0), "connection refused")
		f.addTargets(0, 1)
		f.converged(1, 0)
		Eventually(func(g Gomega) {
			st, ok := f.collectors[0].TargetStatus(targetName(0))
			g.Expect(ok).To(BeTrue())
			g.Expect(st.Collecting()).To(BeTrue())
		}, 20*time.Second).Should(Succeed())
		Eventually(func() string {
			var t operatorv1alpha1.Target
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: targetName(0)}, &t)).To(Succeed())
			return t.Status.ClusterStates[f.name].ConnectionState
		}, 20*time.Second).Should(Equal("READY"))
	})

	It("shows a connection change from the collector's event stream, long before the next poll", func() {
		op.Stop()
		op = startOperatorPolling(time.Hour)
		f := newFleet(1, nil, "")
		f.addTargets(0, 2)
		f.converged(2, 0)
		connection := func() string {
			var t operatorv1alpha1.Target
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: targetName(0)}, &t)).To(Succeed())
			return t.Status.ClusterStates[f.name].ConnectionState
		}
		Eventually(connection, 10*time.Second).Should(Equal("READY"))
		f.collectors[0].SetConnectionState(targetName(0), "TRANSIENT_FAILURE")
		Eventually(connection, 4*time.Second, 100*time.Millisecond).Should(Equal("TRANSIENT_FAILURE"))
	})

	It("sends credentials only to the collector: never to objects, events or logs", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 4)
		f.converged(4, 0)
		sent := false
		for _, col := range f.collectors {
			for _, req := range col.Requests() {
				if strings.Contains(string(req.Body), password) {
					sent = true
				}
			}
		}
		Expect(sent).To(BeTrue(), "the collectors must receive the password to connect")
		Expect(logs.String()).NotTo(ContainSubstring(password))

		for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, &corev1.EventList{}, &appsv1.StatefulSetList{},
			&operatorv1alpha1.ClusterList{}, &operatorv1alpha1.TargetList{}} {
			Expect(k8sClient.List(suiteCtx, list, client.InNamespace(f.ns))).To(Succeed())
			Expect(dump(list)).NotTo(ContainSubstring(password))
		}
	})

	It("pushes over mutual TLS when spec.api.tls is set, and the collectors refuse anyone else", func() {
		f := newTLSFleet(2)
		f.addTargets(0, 4)
		f.converged(4, 0)
		for _, col := range f.collectors {
			Expect(col.URL()).To(HavePrefix("https://"))
			Expect(col.ApplyCount()).To(BeNumerically(">", 0))
			plain := "http://" + strings.TrimPrefix(col.URL(), "https://")
			resp, err := http.Get(plain + "/api/v1/targets")
			if err == nil {
				Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "a plain-HTTP client got an answer")
				resp.Body.Close()
			}
			insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
			_, err = insecure.Get(col.URL() + "/api/v1/targets")
			Expect(err).To(HaveOccurred(), "a client without the operator's certificate got through")
		}
		var sts appsv1.StatefulSet
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name}, &sts)).To(Succeed())
		Expect(sts.Spec.Template.Annotations).To(HaveKey(credentials.APITLSChecksumAnnotation))
	})

	It("converges 1,000 targets on 10 pods with one status write per target, and other writes bounded by the time they took to arrive", func() {
		f := newFleet(10, nil, "")
		start, startGates, startTargets := op.writes.in(f.ns), op.writes.podStatusIn(f.ns), op.writes.targetStatusIn(f.ns)
		began := time.Now()
		f.addTargets(0, 1000)
		created := time.Since(began)
		held := f.converged(1000, 0)
		GinkgoWriter.Printf("created 1,000 targets in %v, converged %v after the first\n", created, time.Since(began))
		Expect(loads(held)).To(HaveEach(Equal(100)))
		f.connected(1000)
		writes, gates := op.writes.in(f.ns)-start, op.writes.podStatusIn(f.ns)-startGates
		targetStatus := op.writes.targetStatusIn(f.ns) - startTargets
		GinkgoWriter.Printf("API writes for 1,000 targets on 10 pods: %d, of which readiness gates: %d, Target statuses: %d\n",
			writes, gates, targetStatus)
		Expect(gates).To(BeNumerically("<=", 10), "a pod's readiness gate is written once, when it is first configured")
		// A new target's first status is written once it collects (or after firstStatusWait): one write each.
		Expect(targetStatus).To(BeNumerically("<=", 1000+10), "Target status writes")
		// The rest are the owned objects and the Cluster's and its Pipeline's counts, written at most once per
		// reconcile; Target changes wake the Cluster at most once a second, its collectors' events at most
		// once per 200 ms. The Targets arrive one by one, over 7-10 s here.
		Expect(writes-targetStatus).To(BeNumerically("<=", 20+10*int64(created/time.Second+2)), "writes other than Target statuses")
	})
})
