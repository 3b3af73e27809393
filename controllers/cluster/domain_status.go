package cluster

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// reportDomains writes status.domains and the DomainsPlaced and DomainFallback conditions of a Cluster with
// domains, and removes them from a Cluster without.
func (r *Reconciler) reportDomains(cluster *operatorv1alpha1.Cluster, w *world) {
	st := &cluster.Status
	if w.split == nil {
		st.Domains = nil
		meta.RemoveStatusCondition(&st.Conditions, operatorv1alpha1.ConditionDomainsPlaced)
		meta.RemoveStatusCondition(&st.Conditions, operatorv1alpha1.ConditionDomainFallback)
		return
	}
	split := w.split
	st.Domains = st.Domains[:0]
	var blocked, holding []string
	for i, a := range split.result.Domains {
		pods := split.pods[i]
		ds := operatorv1alpha1.ClusterDomainStatus{Name: a.Name, Desired: int32(a.Desired), Current: pods.current,
			Ready: pods.ready, NotStarted: pods.notStarted, Replacements: int32(a.Replacements), Blocked: a.Blocked,
			Reasons: a.Reasons}
		if !pods.notStartedSince.IsZero() {
			ds.NotStartedSince = &metav1.Time{Time: pods.notStartedSince.Truncate(1e9)}
		}
		st.Domains = append(st.Domains, ds)
		if a.Blocked {
			blocked = append(blocked, fmt.Sprintf("%s (%d not started)", a.Name, a.Missing))
		}
		if a.Replacements > 0 {
			holding = append(holding, fmt.Sprintf("%s holds %d", a.Name, a.Replacements))
		}
	}

	placed := metav1.Condition{Type: operatorv1alpha1.ConditionDomainsPlaced, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonAllPlaced, Message: fmt.Sprintf("the domains run %d replicas", split.input.Replicas),
		ObservedGeneration: cluster.Generation}
	switch {
	case split.result.Excess > 0:
		placed.Status, placed.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonMinReplicasExceedReplicas
		placed.Message = fmt.Sprintf("the domains' minReplicas add up to %d more than spec.replicas", split.result.Excess)
	case split.result.Unplaced > 0:
		placed.Status, placed.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonMaxReplicasReached
		placed.Message = fmt.Sprintf("%d replica(s) find no room: every domain the policy may grow is at its maxReplicas",
			split.result.Unplaced)
	}
	meta.SetStatusCondition(&st.Conditions, placed)

	was := meta.IsStatusConditionTrue(st.Conditions, operatorv1alpha1.ConditionDomainFallback)
	fallback := metav1.Condition{Type: operatorv1alpha1.ConditionDomainFallback, Status: metav1.ConditionFalse,
		Reason: operatorv1alpha1.ReasonAllStarted, Message: "no domain's pods waited longer than the startup timeout",
		ObservedGeneration: cluster.Generation}
	switch {
	case split.input.StartupTimeout == 0:
		fallback.Reason, fallback.Message = operatorv1alpha1.ReasonFallbackOff, "domainPolicy has no fallback: pods that do not start are waited for"
	case len(blocked) > 0:
		fallback.Status, fallback.Reason = metav1.ConditionTrue, operatorv1alpha1.ReasonStartupTimeout
		fallback.Message = fmt.Sprintf("pods not started within %s in %s; replacements: %s", split.input.StartupTimeout,
			strings.Join(blocked, ", "), orNone(holding))
	}
	meta.SetStatusCondition(&st.Conditions, fallback)
	switch active := fallback.Status == metav1.ConditionTrue; {
	case active && !was:
		r.Recorder.Event(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventDomainFallbackStarted, fallback.Message)
	case !active && was:
		r.Recorder.Event(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventDomainFallbackEnded, "the blocked domains' pods started; the replacements go")
	}
}

// orNone joins parts, or says none.
func orNone(parts []string) string {
	if len(parts) == 0 {
		return "none (no other domain has room)"
	}
	return strings.Join(parts, ", ")
}
