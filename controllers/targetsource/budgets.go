package targetsource

import (
	"time"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/targetmapping"
)

// budgetOf is what spec.sync lets one sync read; the CRD's schema sets the defaults, and an object written
// without them gets the same here.
func budgetOf(s *operatorv1alpha1.TargetSync) inventory.Budget {
	return inventory.Budget{MaxRecords: int(s.MaxRecords), MaxBytes: s.MaxBytes}
}

// mappingTimeout is spec.sync.mappingTimeout, the mapping core's default unless set.
func mappingTimeout(s *operatorv1alpha1.TargetSync) time.Duration {
	if s.MappingTimeout != nil && s.MappingTimeout.Duration > 0 {
		return s.MappingTimeout.Duration
	}
	return targetmapping.DefaultWithin
}

// maxBudgetBackoff caps the wait after syncs over budget, unless the interval is longer.
const maxBudgetBackoff = time.Hour

// budgetBackoff is the wait before the next sync after failures syncs in a row over a budget: the interval,
// doubled at each failure after the first, up to maxBudgetBackoff. An answer over budget is as large the next
// time in all likelihood; each attempt costs the operator the budget, and the inventory its answer.
func budgetBackoff(interval time.Duration, failures int32) time.Duration {
	ceiling := max(interval, maxBudgetBackoff)
	wait := interval
	for i := int32(1); i < failures && wait < ceiling; i++ {
		wait *= 2
	}
	return min(wait, ceiling)
}
