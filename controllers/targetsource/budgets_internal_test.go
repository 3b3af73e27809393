package targetsource

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestBudgetBackoffDoublesFromTheIntervalUpToAnHour(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		failures int32
		want     time.Duration
	}{
		{5 * time.Minute, 1, 5 * time.Minute},
		{5 * time.Minute, 2, 10 * time.Minute},
		{5 * time.Minute, 4, 40 * time.Minute},
		{5 * time.Minute, 5, time.Hour},
		{5 * time.Minute, 1000, time.Hour},
		{10 * time.Second, 3, 40 * time.Second},
		{2 * time.Hour, 3, 2 * time.Hour}, // an interval longer than the cap is never shortened
	} {
		if got := budgetBackoff(tc.interval, tc.failures); got != tc.want {
			t.Errorf("budgetBackoff(%s, %d) = %s, want %s", tc.interval, tc.failures, got, tc.want)
		}
	}
}

func TestASyncOverBudgetIsDueOnlyAfterItsBackoff(t *testing.T) {
	now := time.Now()
	ts := &operatorv1alpha1.TargetSource{Spec: operatorv1alpha1.TargetSourceSpec{HTTP: &operatorv1alpha1.HTTPInventory{
		Interval: &metav1.Duration{Duration: 10 * time.Second}}}}
	ts.Status.LastAttemptTime = &metav1.Time{Time: now}
	ts.Status.BudgetExceededSyncs = 3
	meta.SetStatusCondition(&ts.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionSynced,
		Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonBudgetExceeded})
	r := &Reconciler{}
	if got := r.untilDue(ts, now); got != 40*time.Second {
		t.Errorf("due in %s after 3 syncs over budget at an interval of 10s, want 40s", got)
	}
	ts.Generation = 2 // a spec change is synced at once
	if got := r.untilDue(ts, now); got != 0 {
		t.Errorf("due in %s after a spec change, want now", got)
	}
}
