package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
)

var _ = Describe("Cluster reconciler, reporting what it really does", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	It("says a Cluster without ready pods waits for one, not that its capacity is exhausted", func() {
		f := newFleet(0, nil, "")
		f.addTargets(0, 3)
		Eventually(func(g Gomega) {
			cond := condition(f.cluster(), operatorv1alpha1.ConditionCapacityExhausted)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonScaledToZero))
			g.Expect(cond.Message).To(Equal("the Cluster has 0 replicas: 3 target(s) are not collected"))
		}, 15*time.Second).Should(Succeed())

		f.scale(1)
		Eventually(func(g Gomega) {
			cond := condition(f.cluster(), operatorv1alpha1.ConditionCapacityExhausted)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonNoReadyPods))
			g.Expect(cond.Message).To(Equal("no collector pod is ready yet: 3 target(s) wait for one"))
		}, 15*time.Second).Should(Succeed())

		f.addPod(0)
		f.converged(3, 0)
		Expect(condition(f.cluster(), operatorv1alpha1.ConditionCapacityExhausted).Reason).To(Equal(operatorv1alpha1.ReasonSufficientCapacity))
		Expect(f.events(operatorv1alpha1.EventCapacityExhausted)).To(BeEmpty(), "a warning for a fleet that only had no pod yet")
	})

	It("keeps a target whose credentials Secret is missing off the collectors and out of capacity, and says why", func() {
		f := newFleet(1, ptr.To(int32(2)), "")
		f.addTargets(0, 2)
		broken := &operatorv1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: f.ns},
			Spec: operatorv1alpha1.TargetProfileSpec{CredentialsRef: "not-yet"}}
		Expect(k8sClient.Create(suiteCtx, broken)).To(Succeed())
		t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: "lonely", Namespace: f.ns,
			Labels: map[string]string{"fleet": f.name}},
			Spec: operatorv1alpha1.TargetSpec{Address: "10.9.9.9:57400", Profile: "broken"}}
		Expect(k8sClient.Create(suiteCtx, t)).To(Succeed())

		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.TargetsCount).To(BeEquivalentTo(3))
			g.Expect(c.Status.SkippedTargets).To(BeEquivalentTo(1))
			g.Expect(c.Status.UnassignedTargets).To(BeZero(), "the skipped target took a place on a pod")
			g.Expect(c.Status.Summary).To(Equal("1/1 pods ready, 3 targets, 0 unassigned, 1 skipped"))
			st := f.targetState(g, "lonely")
			g.Expect(st.State).To(Equal(operatorv1alpha1.TargetSkipped))
			g.Expect(st.Pod).To(BeEmpty())
			g.Expect(st.Message).To(ContainSubstring(`secret not found`))
			g.Expect(f.collectors[0].ConfiguredTargets()).To(ConsistOf(targetName(0), targetName(1)))
		}, 15*time.Second).Should(Succeed())

		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "not-yet", Namespace: f.ns},
			StringData: map[string]string{"username": "admin", "password": password}})).To(Succeed())
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.SkippedTargets).To(BeZero())
			g.Expect(c.Status.UnassignedTargets).To(BeEquivalentTo(1), "three placeable targets, room for two")
			var lonely operatorv1alpha1.Target
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "lonely"}, &lonely)).To(Succeed())
			g.Expect(lonely.Status.ClusterStates[f.name].State).NotTo(Equal(operatorv1alpha1.TargetSkipped))
		}, 15*time.Second).Should(Succeed())
	})
})

var _ = Describe("Cluster reconciler, after a Cluster was deleted while no operator ran", func() {
	// The Targets' informer lists every Target when the operator starts, and a Target's status entries map it
	// to the Clusters they name: a Cluster deleted meanwhile is reconciled as gone and cleaned up.
	It("removes the deleted Cluster's entries from its Targets' status when it starts", func() {
		op := startOperator()
		f := newFleet(1, nil, "")
		f.addTargets(0, 2)
		f.converged(2, 0)
		op.Stop()

		// The Cluster and its Pipeline go (say, `kubectl delete -f` of both); the Targets, a shared inventory, stay.
		Expect(k8sClient.Delete(suiteCtx, f.cluster())).To(Succeed())
		Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: f.ns}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name}, &operatorv1alpha1.Cluster{})).NotTo(Succeed())
		}, 10*time.Second).Should(Succeed())
		Expect(f.statusPods()).To(HaveLen(2))
		for _, pod := range f.statusPods() {
			Expect(pod).To(Equal(f.podName(0)), "the states are still there while no operator runs")
		}

		op = startOperator()
		defer op.Stop()
		Eventually(func(g Gomega) {
			var list operatorv1alpha1.TargetList
			g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
			for _, t := range list.Items {
				g.Expect(t.Status.ClusterStates).NotTo(HaveKey(f.name), "target %s", t.Name)
				g.Expect(t.Status.State).To(BeEmpty())
			}
		}, 15*time.Second).Should(Succeed())
	})
})

var _ = Describe("Cluster reconciler, when a pod looks ready but cannot serve", func() {
	var op *operator
	AfterEach(func() { op.Stop() })

	// placedWithin waits until every one of n targets runs on the collector of pod 0, and says how long it took.
	placedWithin := func(f *fleet, n int, limit time.Duration) time.Duration {
		began := time.Now()
		Eventually(func() []string { return f.collectors[0].Targets() }, limit, 50*time.Millisecond).Should(HaveLen(n))
		return time.Since(began)
	}

	It("moves the targets of a pod whose Node is gone after the grace period, without waiting for the pod garbage collector", func() {
		op = startOperator()
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + metav1.NewTime(time.Now()).Format("150405.000000")}}
		Expect(k8sClient.Create(suiteCtx, node)).To(Succeed())
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		Expect(k8sClient.Status().Update(suiteCtx, node)).To(Succeed())

		f := newFleet(1, nil, "3s")
		f.scale(2)
		f.addPodOn(1, node.Name)
		f.addTargets(0, 10)
		held := f.converged(10, 0)
		Expect(held[1]).NotTo(BeEmpty())

		// The Node goes, and its pod's collector with it; the Pod object stays Ready, as it does until the pod
		// garbage collector removes it.
		Expect(k8sClient.Delete(suiteCtx, node)).To(Succeed())
		Expect(f.collectors[1].Close()).To(Succeed())
		took := placedWithin(f, 10, 20*time.Second)
		GinkgoWriter.Printf("all targets on the surviving pod %v after the node was deleted (grace 3s)\n", took)
		Expect(took).To(BeNumerically(">=", 2500*time.Millisecond), "the grace period was not kept")
		Expect(f.pod(1).Status.Conditions).To(ContainElement(HaveField("Type", corev1.PodReady)))
	})

	// The grace period runs from the collector's first unanswered request, as it runs from a pod's last
	// transition to unready.
	It("moves the targets of a pod whose collector stopped answering, once it was silent and after the grace period", func() {
		op = startOperatorPolling(2*time.Second, func(r *cluster.Reconciler) { r.CollectorSilence = time.Second })
		f := newFleet(2, nil, "3s")
		f.addTargets(0, 10)
		held := f.converged(10, 0)
		Expect(held[1]).NotTo(BeEmpty())

		Expect(f.collectors[1].Close()).To(Succeed())
		took := placedWithin(f, 10, 20*time.Second)
		GinkgoWriter.Printf("all targets on the answering pod %v after the other collector went silent (silence 1s, grace 3s)\n", took)
		Expect(took).To(BeNumerically(">=", 2500*time.Millisecond), "the grace period was not kept")
	})
})

var _ = Describe("Cluster reconciler, when collectors refuse a configuration", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	// changeOutput gives the fleet's output a new setting, so that every pod gets a new configuration.
	changeOutput := func(f *fleet, filename string) {
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var o operatorv1alpha1.Output
			if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "file"}, &o); err != nil {
				return err
			}
			o.Spec.Config = map[string]apiextensionsv1.JSON{"filename": {Raw: []byte(`"` + filename + `"`)}}
			return k8sClient.Update(suiteCtx, &o)
		})).To(Succeed())
	}
	gatesOf := func(f *fleet) []corev1.ConditionStatus {
		return []corev1.ConditionStatus{f.configured(0).Status, f.configured(1).Status}
	}

	It("keeps every pod Ready when all collectors refuse the Cluster's outputs, and names the error", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 4)
		f.converged(4, 0)
		Eventually(func() []corev1.ConditionStatus { return gatesOf(f) }, 10*time.Second).Should(HaveEach(corev1.ConditionTrue))

		for _, col := range f.collectors {
			col.FailApply(400, `validate error: output "file": unknown format "csv"`)
		}
		changeOutput(f, "/telemetry/out.csv")
		Eventually(func(g Gomega) {
			cond := condition(f.cluster(), operatorv1alpha1.ConditionConfigApplied)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonPodConfigRejected))
			g.Expect(cond.Message).To(ContainSubstring(`output "file": unknown format "csv"`))
		}, 15*time.Second).Should(Succeed())
		Consistently(func() []corev1.ConditionStatus { return gatesOf(f) }, 3*time.Second, 200*time.Millisecond).
			Should(HaveEach(corev1.ConditionTrue), "a configuration error every pod shares made pods unready")
		Expect(f.events(operatorv1alpha1.EventConfigurationRejected)).NotTo(BeEmpty())
		Expect(f.events(operatorv1alpha1.EventPushFailed)).To(BeEmpty())

		for _, col := range f.collectors {
			col.ClearApplyFailure()
		}
		Eventually(func() metav1.ConditionStatus {
			return condition(f.cluster(), operatorv1alpha1.ConditionConfigApplied).Status
		}, 30*time.Second).Should(Equal(metav1.ConditionTrue))
	})

	It("turns only the refusing pod's gate False when the others accept the same outputs", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 4)
		f.converged(4, 0)
		Eventually(func() []corev1.ConditionStatus { return gatesOf(f) }, 10*time.Second).Should(HaveEach(corev1.ConditionTrue))

		f.collectors[1].FailApply(400, "validate error: disk full")
		changeOutput(f, "/telemetry/out.json")
		Eventually(func(g Gomega) {
			g.Expect(f.configured(1).Status).To(Equal(corev1.ConditionFalse))
			g.Expect(f.configured(1).Reason).To(Equal(operatorv1alpha1.ReasonPodConfigPushFailed))
			g.Expect(condition(f.cluster(), operatorv1alpha1.ConditionConfigApplied).Reason).To(Equal("PushFailed"))
		}, 15*time.Second).Should(Succeed())
		Expect(f.configured(0).Status).To(Equal(corev1.ConditionTrue))
	})
})
