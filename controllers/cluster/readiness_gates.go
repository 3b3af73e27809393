package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// configuredCondition is the value of a pod's readiness-gate condition (operator.gnmic.dev/configured).
type configuredCondition struct {
	status  corev1.ConditionStatus
	reason  string
	message string
}

// configuredWrite is the readiness-gate condition last written to a pod, and the resourceVersion the pod had
// in the cache before that write: while the cache still shows that version it does not show the write yet.
type configuredWrite struct {
	uid       types.UID
	before    string
	condition configuredCondition
}

// writeReadinessGates sets the readiness gate of every pod the operator considers ready: True once the pod
// holds its configuration, False with the push error when it does not. The kubelet reports a pod Ready only
// when the gate is True, so a rolling update or a drain waits for each pod to hold its targets before it
// takes down the next one.
//
// A pod's status is written only when the condition changes: an unchanged fleet costs no write. Every pod is
// tried even when one write fails; the failures are returned together, for a retry with backoff.
func (r *Reconciler) writeReadinessGates(ctx context.Context, cluster types.NamespacedName, plan placementPlan,
	pushed pushResults) error {
	memory := r.memoryOf(cluster)
	gates := make(map[string]configuredWrite, len(plan.availability.Ready))
	defer func() { memory.gates = gates }()
	var errs []error
	for _, ordinal := range plan.availability.Ready {
		pp := pushed.pods[ordinal]
		if pp == nil {
			continue
		}
		pod, want := pp.pod, wantConfigured(pp)
		last, wrote := memory.gates[pod.Name]
		if wrote {
			gates[pod.Name] = last
		}
		have := podCondition(pod, operatorv1alpha1.ConditionPodConfigured)
		if have != nil && have.Status == want.status && have.Reason == want.reason && have.Message == want.message {
			continue
		}
		if have == nil && want.reason == operatorv1alpha1.ReasonPodConfigApplying {
			continue // a gate without its condition already holds the pod back: no write needed to say so
		}
		if wrote && last.uid == pod.UID && last.before == pod.ResourceVersion && last.condition == want {
			continue // written by an earlier reconcile; the cache does not show it yet
		}
		transition := have == nil || have.Status != want.status
		if err := r.patchConfigured(ctx, pod, want, transition); err != nil {
			errs = append(errs, err)
			continue
		}
		gates[pod.Name] = configuredWrite{uid: pod.UID, before: pod.ResourceVersion, condition: want}
	}
	return errors.Join(errs...)
}

// wantConfigured is the readiness-gate condition a ready pod gets from this reconcile. It turns True only
// once the pod's collector runs its whole configuration (an acknowledged apply proves nothing: the collector
// acts on it later, or drops part of it). Once True it stays True while later changes are worked off, so that
// ordinary rebalancing does not flap the pod's readiness, unless the push fails or the collector dropped
// targets it was sent.
func wantConfigured(pp *podPush) configuredCondition {
	// The messages name no target count: it would change with every push, and each change would cost a pod
	// write (and wake every watcher of the pod). status.collectors of the Cluster has the counts.
	applied := configuredCondition{status: corev1.ConditionTrue, reason: operatorv1alpha1.ReasonPodConfigApplied,
		message: "holds its configuration"}
	have := podCondition(pp.pod, operatorv1alpha1.ConditionPodConfigured)
	heldBefore := have != nil && have.Status == corev1.ConditionTrue && have.Reason == applied.reason
	switch {
	case pp.unsupported:
		// Not pushed, and said alike every reconcile: the gate is written once.
		return configuredCondition{status: corev1.ConditionFalse, reason: operatorv1alpha1.ReasonCollectorTooOld,
			message: pp.status.Error}
	case pp.err != nil && pp.sharedRejection && heldBefore:
		// Every pod refuses this configuration: the pod keeps serving what it holds. Turning every gate False
		// would make the PodDisruptionBudget block every eviction and stall rollouts, for nothing.
		return applied
	case pp.err != nil && pp.sharedRejection:
		return configuredCondition{status: corev1.ConditionFalse, reason: operatorv1alpha1.ReasonPodConfigRejected,
			message: pp.err.Error()}
	case pp.err != nil:
		// The pod's error in Cluster status.collectors: the push error, and whether the pod's targets moved
		// to other pods because it refused its configuration for longer than the grace period.
		return configuredCondition{status: corev1.ConditionFalse, reason: operatorv1alpha1.ReasonPodConfigPushFailed,
			message: pp.status.Error}
	}
	if pp.step.Settled {
		return applied
	}
	if heldBefore && len(pp.step.Repaired) == 0 {
		return applied
	}
	return configuredCondition{status: corev1.ConditionFalse, reason: operatorv1alpha1.ReasonPodConfigApplying,
		message: "its collector does not run its whole configuration yet"}
}

// configuredPatch is a strategic-merge patch of a pod's status carrying only the readiness-gate condition:
// pod conditions merge by type, so the kubelet's own conditions are kept. The pod's UID is part of the
// patch as a precondition: a pod recreated under the same name has not received this configuration, and the
// API server refuses to change a UID.
type configuredPatch struct {
	Metadata struct {
		UID types.UID `json:"uid"`
	} `json:"metadata"`
	Status struct {
		Conditions []configuredPatchCondition `json:"conditions"`
	} `json:"status"`
}

// configuredPatchCondition leaves lastTransitionTime out when the status does not change, so that the
// pod keeps the time it last changed (corev1.PodCondition would send null and clear it).
type configuredPatchCondition struct {
	Type               string                 `json:"type"`
	Status             corev1.ConditionStatus `json:"status"`
	Reason             string                 `json:"reason"`
	Message            string                 `json:"message"`
	LastTransitionTime *metav1.Time           `json:"lastTransitionTime,omitempty"`
}

// patchConfigured writes the readiness-gate condition to the pod's status. A pod deleted or recreated
// meanwhile is left alone: the next reconcile sees its replacement.
func (r *Reconciler) patchConfigured(ctx context.Context, pod *corev1.Pod, want configuredCondition, transition bool) error {
	var p configuredPatch
	p.Metadata.UID = pod.UID
	cond := configuredPatchCondition{Type: operatorv1alpha1.ConditionPodConfigured, Status: want.status,
		Reason: want.reason, Message: want.message}
	if transition {
		now := metav1.NewTime(r.now())
		cond.LastTransitionTime = &now
	}
	p.Status.Conditions = []configuredPatchCondition{cond}
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode readiness gate of pod %s: %w", pod.Name, err)
	}
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	err = r.Status().Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, body))
	switch {
	case apierrors.IsNotFound(err) || uidChanged(err):
		return nil
	case err != nil:
		return fmt.Errorf("set readiness gate of pod %s: %w", pod.Name, err)
	}
	log.FromContext(ctx).Info("readiness gate set", "pod", pod.Name, "configured", want.status, "reason", want.reason)
	return nil
}

// uidChanged tells whether the API server refused a patch because the pod's UID is not the one in the patch:
// the pod was recreated under the same name.
func uidChanged(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == "metadata.uid" {
			return true
		}
	}
	return false
}
