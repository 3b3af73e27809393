package targetsource

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
)

// listedInStatus is how many invalid records and conflicting Targets status names.
const listedInStatus = 10

// reportStatus is the TargetSource's status after a sync. A sync that changed nothing keeps the counts of the
// last successful one and says why in its conditions.
func reportStatus(ts *operatorv1alpha1.TargetSource, o outcome, now time.Time) operatorv1alpha1.TargetSourceStatus {
	s := *ts.Status.DeepCopy()
	s.Syncing = nil // the sync is over
	s.ObservedGeneration = ts.Generation
	s.Provider = providerName(&ts.Spec)
	at := metav1.NewTime(now)
	s.LastAttemptTime = &at
	s.LastSyncRequest = ts.Annotations[operatorv1alpha1.SyncRequestedAnnotation]
	set := func(typ string, status metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: truncate(message, 1024), ObservedGeneration: ts.Generation})
	}

	if o.stage == stageMapping {
		set(operatorv1alpha1.ConditionMappingValid, metav1.ConditionFalse, operatorv1alpha1.ReasonMappingInvalid, compileMessage(o.err))
		set(operatorv1alpha1.ConditionSynced, metav1.ConditionFalse, operatorv1alpha1.ReasonMappingInvalid, "spec.mapping does not compile; no Target was changed")
		return s
	}
	if o.stage == stageBudget {
		s.BudgetExceededSyncs++
		set(operatorv1alpha1.ConditionSynced, metav1.ConditionFalse, operatorv1alpha1.ReasonBudgetExceeded,
			fmt.Sprintf("the answer goes over a budget; no Target was changed; the next sync in %s: %s",
				budgetBackoff(interval(ts), s.BudgetExceededSyncs), o.err))
		return s
	}
	s.BudgetExceededSyncs = 0
	if o.stage == stageFetch {
		if o.noSnapshot {
			set(operatorv1alpha1.ConditionSynced, metav1.ConditionUnknown, operatorv1alpha1.ReasonNoSnapshotYet, o.err.Error())
			return s
		}
		set(operatorv1alpha1.ConditionInventoryReachable, metav1.ConditionFalse, operatorv1alpha1.ReasonFetchFailed, o.err.Error())
		set(operatorv1alpha1.ConditionSynced, metav1.ConditionFalse, operatorv1alpha1.ReasonFetchFailed,
			"the inventory could not be read; no Target was changed: "+o.err.Error())
		return s
	}
	set(operatorv1alpha1.ConditionInventoryReachable, metav1.ConditionTrue, operatorv1alpha1.ReasonReachable,
		fmt.Sprintf("%d records read", o.records))
	if n := len(o.mapped.Invalid); n > 0 {
		set(operatorv1alpha1.ConditionMappingValid, metav1.ConditionFalse, operatorv1alpha1.ReasonRecordsInvalid,
			fmt.Sprintf("%d records map to no Target (status.invalidRecords names the first); the first: %s", n, o.mapped.Invalid[0]))
	} else {
		set(operatorv1alpha1.ConditionMappingValid, metav1.ConditionTrue, operatorv1alpha1.ReasonMappingValid, "every record maps")
	}

	switch o.stage {
	case stageTruncated:
		set(operatorv1alpha1.ConditionTruncated, metav1.ConditionTrue, operatorv1alpha1.ReasonTruncated, o.err.Error()+"; no Target was changed")
		set(operatorv1alpha1.ConditionSynced, metav1.ConditionFalse, operatorv1alpha1.ReasonTruncated,
			"the answer looks truncated; no Target was changed: "+o.err.Error())
		return s
	case stageList, stageApply:
		set(operatorv1alpha1.ConditionSynced, metav1.ConditionFalse, operatorv1alpha1.ReasonApplyFailed,
			fmt.Sprintf("%s (written before it: %s); the next sync plans again", o.err, o.written))
		return s
	}
	set(operatorv1alpha1.ConditionTruncated, metav1.ConditionFalse, operatorv1alpha1.ReasonNotTruncated, "the answer is complete")

	s.Syncs = o.sync
	s.LastSyncTime = &at
	s.Records = int32(o.records)
	s.RecordsSkipped = int32(o.mapped.Skipped)
	s.RecordsInvalid = int32(len(o.mapped.Invalid))
	s.InvalidRecords = nil
	for _, inv := range o.mapped.Invalid[:min(len(o.mapped.Invalid), listedInStatus)] {
		s.InvalidRecords = append(s.InvalidRecords, truncate(inv.String(), 256))
	}
	s.Targets = int32(o.plan.Owned)
	s.TargetsMissing = int32(o.plan.Missing)
	s.TargetsCreated = int32(o.written.created)
	s.TargetsUpdated = int32(o.written.updated)
	s.TargetsDeleted = int32(o.written.deleted)
	s.TargetsConflicting = int32(len(o.plan.Conflicts))
	s.ConflictingTargets = slices.Clone(o.plan.Conflicts[:min(len(o.plan.Conflicts), listedInStatus)])
	if len(o.plan.Conflicts) > 0 {
		set(operatorv1alpha1.ConditionConflicts, metav1.ConditionTrue, operatorv1alpha1.ReasonTargetsConflict,
			fmt.Sprintf("%d Targets named by the inventory exist and are not this TargetSource's; they are left alone: %s",
				len(o.plan.Conflicts), strings.Join(s.ConflictingTargets, ", ")))
	} else {
		set(operatorv1alpha1.ConditionConflicts, metav1.ConditionFalse, operatorv1alpha1.ReasonNoConflicts, "no conflicting Target")
	}
	setResourcesOwned(set, ts.Name, o.plan.Conflicts)
	set(operatorv1alpha1.ConditionSynced, metav1.ConditionTrue, operatorv1alpha1.ReasonSynced,
		fmt.Sprintf("sync %d: %d records, %d Targets (%s, %d missing)", o.sync, o.records, o.plan.Owned, o.written, o.plan.Missing))
	return s
}

func (w written) String() string {
	return fmt.Sprintf("%d created, %d updated, %d marked missing, %d deleted", w.created, w.updated, w.marked, w.deleted)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// setResourcesOwned says, as a Cluster does of its objects (docs/security.md, "Ownership"), whether every
// Target the inventory names is the TargetSource's or could be created: False (NameTaken) names those that are
// someone else's, which are left as they are.
func setResourcesOwned(set func(typ string, status metav1.ConditionStatus, reason, message string), name string, conflicts []string) {
	if len(conflicts) == 0 {
		set(operatorv1alpha1.ConditionResourcesOwned, metav1.ConditionTrue, operatorv1alpha1.ReasonResourcesOwned,
			"every Target the inventory names is the TargetSource's")
		return
	}
	taken := make([]owned.NameTakenError, 0, len(conflicts))
	for _, c := range conflicts {
		taken = append(taken, owned.NameTakenError{Kind: "Target", Name: c, Holder: "not made by this TargetSource"})
	}
	set(operatorv1alpha1.ConditionResourcesOwned, metav1.ConditionFalse, operatorv1alpha1.ReasonNameTaken,
		owned.Message("TargetSource", name, taken, listedInStatus))
}
