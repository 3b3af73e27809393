package cluster

import (
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

var namespaceSeq atomic.Int32

// A Target status write of one Cluster's entry, made by patchTargetState against the API server, and what
// the Target holds after it.
var _ = Describe("Target status patches", func() {
	var (
		r  *Reconciler
		ns string
	)
	collecting := operatorv1alpha1.TargetClusterState{Pod: "telemetry-0", State: operatorv1alpha1.TargetAssigned,
		ConnectionState: "READY", Collecting: true, LastUpdated: metav1.NewTime(time.Unix(1_700_000_000, 0))}
	// Every field of the entry set.
	pending := operatorv1alpha1.TargetClusterState{Pod: "telemetry-1", LastPod: "telemetry-0",
		State: operatorv1alpha1.TargetPending, Weight: 3, WeightSource: operatorv1alpha1.WeightSourceMeasured,
		ResponseRate: "12.5", ConnectionState: "CONNECTING", Collecting: true, Message: notStartedYet,
		LastUpdated: metav1.NewTime(time.Unix(1_700_000_060, 0))}
	unassigned := operatorv1alpha1.TargetClusterState{State: operatorv1alpha1.TargetUnassigned,
		Message: "every collector pod is at capacity", LastUpdated: metav1.NewTime(time.Unix(1_700_000_000, 0))}

	BeforeEach(func() {
		r = &Reconciler{Client: k8sClient}
		ns = fmt.Sprintf("status-patch-%d", namespaceSeq.Add(1))
		Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	// newTarget creates a Target whose status holds the entries given, and gives it as the API server has it.
	newTarget := func(states map[string]operatorv1alpha1.TargetClusterState) *operatorv1alpha1.Target {
		t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "router-1"},
			Spec: operatorv1alpha1.TargetSpec{Address: "10.0.0.1:57400", Profile: "default"}}
		Expect(k8sClient.Create(suiteCtx, t)).To(Succeed())
		if len(states) > 0 {
			t.Status.ClusterStates = states
			t.Status.Clusters, t.Status.State = summarize(states)
			Expect(k8sClient.Status().Update(suiteCtx, t)).To(Succeed())
		}
		return get(t)
	}

	It("set one Cluster's entry and leave another Cluster's as it is, without touching the Target given", func() {
		listed := newTarget(map[string]operatorv1alpha1.TargetClusterState{"other": unassigned})
		given := listed.DeepCopy()

		Expect(r.patchTargetState(suiteCtx, listed, "telemetry", &collecting)).To(Succeed())

		Expect(listed).To(Equal(given), "the Target given to the write")
		after := get(listed)
		Expect(after.Status.ClusterStates).To(HaveLen(2))
		Expect(after.Status.ClusterStates["other"]).To(equalState(unassigned))
		Expect(after.Status.ClusterStates["telemetry"]).To(equalState(collecting))
	})

	It("remove the fields of an entry that go empty", func() {
		listed := newTarget(map[string]operatorv1alpha1.TargetClusterState{"telemetry": pending})

		Expect(r.patchTargetState(suiteCtx, listed, "telemetry", &collecting)).To(Succeed())

		after := get(listed)
		Expect(after.Status.ClusterStates["telemetry"]).To(equalState(collecting))
		entry := unstructuredEntry(after, "telemetry")
		Expect(entry).To(HaveLen(5), "the entry as stored: %v", entry)
		for _, gone := range []string{"lastPod", "weight", "weightSource", "responseRate", "message"} {
			Expect(entry).NotTo(HaveKey(gone))
		}

		By("and a boolean that goes false")
		listed = after
		notCollecting := collecting
		notCollecting.Collecting, notCollecting.ConnectionState, notCollecting.Message = false, "", "starting"
		Expect(r.patchTargetState(suiteCtx, listed, "telemetry", &notCollecting)).To(Succeed())
		Expect(unstructuredEntry(get(listed), "telemetry")).To(And(Not(HaveKey("collecting")), Not(HaveKey("connectionState")),
			HaveKeyWithValue("message", "starting")))
	})

	It("are refused with a conflict when the Target changed since it was listed, and write nothing", func() {
		listed := newTarget(map[string]operatorv1alpha1.TargetClusterState{"telemetry": pending})
		// Another Cluster writes its entry meanwhile.
		changed := listed.DeepCopy()
		changed.Status.ClusterStates["other"] = unassigned
		changed.Status.Clusters, changed.Status.State = summarize(changed.Status.ClusterStates)
		Expect(k8sClient.Status().Update(suiteCtx, changed)).To(Succeed())
		before := get(listed)

		err := r.patchTargetState(suiteCtx, listed, "telemetry", &collecting)

		Expect(apierrors.IsConflict(err)).To(BeTrue(), "the write's error: %v", err)
		after := get(listed)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion))
		Expect(after.Status).To(Equal(before.Status))

		By("and the next write, from the Target as it is now, keeps the other Cluster's entry")
		Expect(r.patchTargetState(suiteCtx, after, "telemetry", &collecting)).To(Succeed())
		Expect(get(listed).Status.ClusterStates).To(And(HaveLen(2), HaveKey("other")))
	})

	It("remove a Cluster's entry, and the whole map with the last one", func() {
		listed := newTarget(map[string]operatorv1alpha1.TargetClusterState{"telemetry": collecting, "other": unassigned})

		Expect(r.patchTargetState(suiteCtx, listed, "telemetry", nil)).To(Succeed())

		after := get(listed)
		Expect(after.Status.ClusterStates).To(HaveLen(1))
		Expect(after.Status.ClusterStates).To(HaveKey("other"))

		Expect(r.patchTargetState(suiteCtx, after, "other", nil)).To(Succeed())
		after = get(listed)
		Expect(after.Status).To(Equal(operatorv1alpha1.TargetStatus{}))
		Expect(unstructuredStatus(after)).NotTo(HaveKey("clusterStates"))
	})

	It("set the Clusters and State columns from every entry", func() {
		listed := newTarget(nil)

		Expect(r.patchTargetState(suiteCtx, listed, "telemetry", &collecting)).To(Succeed())
		listed = get(listed)
		Expect(listed.Status.Clusters).To(BeEquivalentTo(1))
		Expect(listed.Status.State).To(Equal(operatorv1alpha1.TargetAssigned))

		Expect(r.patchTargetState(suiteCtx, listed, "other", &collecting)).To(Succeed())
		listed = get(listed)
		Expect(listed.Status.Clusters).To(BeEquivalentTo(2))
		Expect(listed.Status.State).To(Equal(operatorv1alpha1.TargetAssigned))

		Expect(r.patchTargetState(suiteCtx, listed, "other", &pending)).To(Succeed())
		listed = get(listed)
		Expect(listed.Status.Clusters).To(BeEquivalentTo(1))
		Expect(listed.Status.State).To(Equal(operatorv1alpha1.TargetPending))

		Expect(r.patchTargetState(suiteCtx, listed, "telemetry", &unassigned)).To(Succeed())
		listed = get(listed)
		Expect(listed.Status.Clusters).To(BeZero())
		Expect(listed.Status.State).To(Equal(operatorv1alpha1.TargetUnassigned))
		Expect(unstructuredStatus(listed)).NotTo(HaveKey("clusters"))

		Expect(r.patchTargetState(suiteCtx, listed, "telemetry", nil)).To(Succeed())
		Expect(r.patchTargetState(suiteCtx, get(listed), "other", &collecting)).To(Succeed())
		listed = get(listed)
		Expect(listed.Status.Clusters).To(BeEquivalentTo(1))
		Expect(listed.Status.State).To(Equal(operatorv1alpha1.TargetAssigned))
	})
})

// get is the Target as the API server has it now.
func get(t *operatorv1alpha1.Target) *operatorv1alpha1.Target {
	GinkgoHelper()
	out := &operatorv1alpha1.Target{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(t), out)).To(Succeed())
	return out
}

// equalState matches an entry field by field, its time to the second (what the API server keeps).
func equalState(want operatorv1alpha1.TargetClusterState) OmegaMatcher {
	return WithTransform(func(st operatorv1alpha1.TargetClusterState) operatorv1alpha1.TargetClusterState {
		st.LastUpdated = metav1.NewTime(st.LastUpdated.UTC())
		return st
	}, Equal(func() operatorv1alpha1.TargetClusterState {
		want.LastUpdated = metav1.NewTime(want.LastUpdated.UTC())
		return want
	}()))
}

// unstructuredStatus is the Target's status as the API server stores it, every field it has.
func unstructuredStatus(t *operatorv1alpha1.Target) map[string]any {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(operatorv1alpha1.GroupVersion.WithKind("Target"))
	Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(t), u)).To(Succeed())
	st, _ := u.Object["status"].(map[string]any)
	return st
}

// unstructuredEntry is one Cluster's entry of the Target's status as the API server stores it.
func unstructuredEntry(t *operatorv1alpha1.Target, cluster string) map[string]any {
	GinkgoHelper()
	states, _ := unstructuredStatus(t)["clusterStates"].(map[string]any)
	entry, ok := states[cluster].(map[string]any)
	Expect(ok).To(BeTrue(), "an entry of %s in %v", cluster, states)
	return entry
}
