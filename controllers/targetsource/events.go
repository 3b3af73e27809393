package targetsource

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// recordEvents tells, in `kubectl describe targetsource`, what a sync changed or why it changed nothing. A
// steady inventory records nothing. ts is the TargetSource before this sync's status.
func (r *Reconciler) recordEvents(ts *operatorv1alpha1.TargetSource, o outcome) {
	if r.Recorder == nil {
		return
	}
	switch o.stage {
	case stageMapping:
		r.Recorder.Event(ts, corev1.EventTypeWarning, operatorv1alpha1.EventMappingInvalid, truncate(compileMessage(o.err), 1024))
	case stageFetch:
		if !o.noSnapshot {
			r.Recorder.Event(ts, corev1.EventTypeWarning, operatorv1alpha1.EventSyncFailed, truncate("no Target changed: "+o.err.Error(), 1024))
		}
	case stageBudget:
		r.Recorder.Event(ts, corev1.EventTypeWarning, operatorv1alpha1.EventBudgetExceeded, truncate("no Target changed: "+o.err.Error(), 1024))
	case stageTruncated:
		r.Recorder.Event(ts, corev1.EventTypeWarning, operatorv1alpha1.EventInventoryTruncated, "no Target changed: "+o.err.Error())
	case stageList, stageApply:
		r.Recorder.Event(ts, corev1.EventTypeWarning, operatorv1alpha1.EventSyncFailed, truncate(fmt.Sprintf("%s (written before it: %s)", o.err, o.written), 1024))
	case stageDone:
		if w := o.written; w != (written{}) {
			r.Recorder.Eventf(ts, corev1.EventTypeNormal, operatorv1alpha1.EventInventorySynced, "%d records: %s", o.records, w)
		}
		shown := o.plan.Conflicts[:min(len(o.plan.Conflicts), listedInStatus)]
		if len(o.plan.Conflicts) > 0 && (int(ts.Status.TargetsConflicting) != len(o.plan.Conflicts) || !slices.Equal(ts.Status.ConflictingTargets, shown)) {
			r.Recorder.Eventf(ts, corev1.EventTypeWarning, operatorv1alpha1.EventTargetsConflict,
				"%d Targets named by the inventory are not this TargetSource's and are left alone: %s", len(o.plan.Conflicts), strings.Join(shown, ", "))
		}
	}
}
