package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// reportStatus computes the Cluster's status from this reconcile, writes it once, and emits the events a
// user wants to see.
func (r *Reconciler) reportStatus(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, plan placementPlan, pushed pushResults) error {
	base := cluster.DeepCopy()
	st := &cluster.Status
	counts := w.selection.Counts()
	st.ObservedGeneration = cluster.Generation
	st.Selector = workload.Selector(cluster)
	st.PipelinesCount, st.TargetsCount = counts.Pipelines, counts.Targets
	st.SubscriptionsCount, st.OutputsCount, st.InputsCount = counts.Subscriptions, counts.Outputs, counts.Inputs
	st.ProcessorsCount = counts.Processors
	st.UnassignedTargets = int32(len(plan.result.Unassigned))
	st.SkippedTargets = int32(w.skippedTargets())
	st.PodCapacity = int32(plan.result.Capacity)
	st.UnassignedUnits = int32(w.weights.Units(plan.result.Unassigned))
	st.ReadyReplicas = 0
	st.TunnelTargets = 0
	st.Collectors = st.Collectors[:0]
	ordinals := make([]int, 0, len(pushed.pods))
	for o := range pushed.pods {
		ordinals = append(ordinals, o)
	}
	sort.Ints(ordinals)
	for _, o := range ordinals {
		pp := pushed.pods[o]
		if pp.status.Ready {
			st.ReadyReplicas++
		}
		st.TunnelTargets += pp.status.TunnelTargetsCount
		collector := pp.status
		collector.TargetUnits = int32(w.weights.Units(plan.onPod[o]))
		r.reportCollectorAPI(&collector, pp.pod)
		st.Collectors = append(st.Collectors, collector)
	}

	// The demand in units: the placed targets by weight, and the dial-in devices, which take room but have no
	// weight of their own, one unit each (as targets_demand counts them).
	st.TargetUnits = int32(w.weights.Units(w.placeable())) + st.TunnelTargets
	st.PodStatuses = podStatuses(plan, pushed)
	st.Summary = fmt.Sprintf("%d/%d pods ready, %d targets, %d unassigned", st.ReadyReplicas, len(w.desired),
		st.TargetsCount, st.UnassignedTargets)
	if st.SkippedTargets > 0 {
		st.Summary += fmt.Sprintf(", %d skipped", st.SkippedTargets)
	}
	if st.TunnelTargets > 0 {
		st.Summary += fmt.Sprintf(", %d dial-in", st.TunnelTargets)
	}
	if w.weights.Weighed() {
		st.Summary += fmt.Sprintf(", %d/%d units assigned", st.TargetUnits-st.UnassignedUnits, st.TargetUnits)
	}

	r.reportDomains(cluster, w)
	r.setCapacityCondition(cluster, w, plan)
	r.setAPISecuredCondition(cluster)
	r.setCollectorsSupportedCondition(cluster, w, pushed)
	r.setOutputPortsCondition(cluster, w)
	r.setServiceMonitorsCondition(cluster, w)
	r.setResourcesOwnedCondition(cluster, w.taken.Names())
	failed, applying := pushed.failedPods(), pushed.applyingPods()
	applied := metav1.Condition{Type: operatorv1alpha1.ConditionConfigApplied, Status: metav1.ConditionTrue,
		Reason: "Applied", Message: "every ready collector pod runs its configuration", ObservedGeneration: cluster.Generation}
	shared := pushed.sharedRejections()
	switch {
	case len(shared) > 0:
		applied.Status, applied.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonPodConfigRejected
		applied.Message = fmt.Sprintf("the collectors refuse the Cluster's outputs, inputs or processors, which no collector "+
			"accepted before; pods keep what they hold%s: %s", blamedOn(r.memoryOf(client.ObjectKeyFromObject(cluster)).verdict),
			rejectionOf(pushed, shared[0]))
	case len(failed) > 0:
		applied.Status, applied.Reason = metav1.ConditionFalse, "PushFailed"
		applied.Message = fmt.Sprintf("configuration not applied to pod(s) %s", strings.Join(failed, ", "))
		if emptied := pushed.emptiedPods(); len(emptied) > 0 {
			applied.Message += fmt.Sprintf("; pod(s) %s refused it for longer than the grace period (%s), their targets "+
				"moved to other pods", strings.Join(emptied, ", "), plan.grace)
		}
	case len(applying) > 0:
		applied.Status, applied.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonPodConfigApplying
		applied.Message = fmt.Sprintf("the collectors of pod(s) %s do not run their whole configuration yet",
			strings.Join(applying, ", "))
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, applied)
	desired := int32(len(w.desired))
	ready := st.ReadyReplicas >= desired && len(failed) == 0
	setCondition(cluster, operatorv1alpha1.ConditionReady, ready, "Ready", "NotReady",
		fmt.Sprintf("%d/%d collector pods ready and configured", st.ReadyReplicas, desired),
		fmt.Sprintf("%d/%d collector pods ready, %d failing configuration", st.ReadyReplicas, desired, len(failed)))

	m := r.memoryOf(client.ObjectKeyFromObject(cluster))
	health := m.outputHealth
	setOutputsRunningCondition(cluster, health, m.outputsKnownOnce)
	m.outputsKnownOnce = m.outputsKnownOnce || health.known()
	r.emitEvents(cluster, plan, pushed)
	r.reportOutputHealth(cluster, w, health)
	if equality.Semantic.DeepEqual(base.Status, cluster.Status) {
		return nil
	}
	if err := r.Status().Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write cluster status: %w", err)
	}
	return nil
}

// podStatuses groups the collector pods by state, for consoles.
func podStatuses(plan placementPlan, pushed pushResults) map[string][]string {
	holding := map[int]bool{}
	for _, o := range plan.availability.Holding {
		holding[o] = true
	}
	out := map[string][]string{}
	for ordinal, pp := range pushed.pods {
		state := operatorv1alpha1.PodUnavailable
		switch {
		case pp.err != nil:
			state = operatorv1alpha1.PodConfigFailed
		case pp.status.Ready:
			state = operatorv1alpha1.PodReady
		case holding[ordinal]:
			state = operatorv1alpha1.PodHolding
		}
		out[state] = append(out[state], pp.pod.Name)
	}
	for _, names := range out {
		sort.Strings(names)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// setCapacityCondition says whether targets are unassigned for lack of room. With no ready pod (a new
// Cluster, a fleet restarting, replicas 0) every target is unassigned, but not because pods are full: the
// condition says so, and raises no warning. On a Cluster that weighs its targets it counts the units too: a
// pod below the capacity may still have no room for a heavy target.
func (r *Reconciler) setCapacityCondition(cluster *operatorv1alpha1.Cluster, w *world, plan placementPlan) {
	n := len(plan.result.Unassigned)
	was := meta.IsStatusConditionTrue(cluster.Status.Conditions, operatorv1alpha1.ConditionCapacityExhausted)
	c := metav1.Condition{Type: operatorv1alpha1.ConditionCapacityExhausted, Status: metav1.ConditionFalse,
		Reason: operatorv1alpha1.ReasonSufficientCapacity, Message: "every target is assigned to a pod",
		ObservedGeneration: cluster.Generation}
	switch {
	case n > 0 && workload.Replicas(cluster) == 0:
		c.Reason = operatorv1alpha1.ReasonScaledToZero
		c.Message = fmt.Sprintf("the Cluster has 0 replicas: %d target(s) are not collected", n)
	case n > 0 && len(plan.availability.Ready) == 0:
		c.Reason = operatorv1alpha1.ReasonNoReadyPods
		c.Message = fmt.Sprintf("no collector pod is ready yet: %d target(s) wait for one", n)
	case n > 0 && w.weights.Weighed():
		c.Status, c.Reason = metav1.ConditionTrue, operatorv1alpha1.ReasonInsufficientCapacity
		c.Message = fmt.Sprintf("%d target(s) of %d units could not be assigned, no pod has room for them (%d units per pod)",
			n, w.weights.Units(plan.result.Unassigned), plan.result.Capacity)
	case n > 0:
		c.Status, c.Reason = metav1.ConditionTrue, operatorv1alpha1.ReasonInsufficientCapacity
		c.Message = fmt.Sprintf("%d target(s) could not be assigned, all pods at capacity", n)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
	exhausted := c.Status == metav1.ConditionTrue
	switch {
	case exhausted && !was && w.weights.Weighed():
		r.Recorder.Event(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventCapacityExhausted, c.Message)
	case exhausted && !was:
		r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventCapacityExhausted,
			"%d target(s) could not be assigned, all pods at capacity (%d per pod)", n, plan.result.Capacity)
	case !exhausted && was && n == 0:
		r.Recorder.Event(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventCapacityRestored, "every target is assigned to a pod")
	}
}

// setCondition sets a condition that is True with one reason and message, False with others.
func setCondition(cluster *operatorv1alpha1.Cluster, kind string, isTrue bool, trueReason, falseReason, trueMsg, falseMsg string) {
	c := metav1.Condition{Type: kind, Status: metav1.ConditionFalse, Reason: falseReason, Message: falseMsg,
		ObservedGeneration: cluster.Generation}
	if isTrue {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, trueReason, trueMsg
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
}

// setAPISecuredCondition says whether the Cluster's collector API is protected, and warns with an event when
// the Cluster opts out of TLS: once, when the condition starts to say so or its reason changes.
func (r *Reconciler) setAPISecuredCondition(cluster *operatorv1alpha1.Cluster) {
	c := metav1.Condition{Type: operatorv1alpha1.ConditionAPISecured, Status: metav1.ConditionTrue,
		Reason:             operatorv1alpha1.ReasonMutualTLS,
		Message:            "collectors serve their REST API over TLS and accept only the operator's client certificate",
		ObservedGeneration: cluster.Generation}
	insecure := cluster.Spec.API.Insecure
	if insecure != nil {
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonOptedOut
		c.Message = truncate("spec.api.insecure: "+insecure.Reason, maxConditionMessage)
	}
	was := meta.FindStatusCondition(cluster.Status.Conditions, operatorv1alpha1.ConditionAPISecured)
	if insecure != nil && (was == nil || was.Status != c.Status || was.Message != c.Message) {
		r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventAPIInsecure,
			"the collectors' REST API runs without TLS: target passwords cross the pod network in clear, and any pod "+
				"that reaches the API can push configuration (spec.api.insecure.reason: %s)", insecure.Reason)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
}
