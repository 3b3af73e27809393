package targetmapping_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/targetmapping"
)

// mapRecords maps records within the default deadline, failing the test on an error.
func mapRecords(t *testing.T, m *targetmapping.Mapper, records []inventory.Record) targetmapping.Result {
	t.Helper()
	res, err := m.Map(context.Background(), records, 0)
	if err != nil {
		t.Fatalf("map: %v", err)
	}
	return res
}

// costlyName loops to the cost limit of an expression on every record (TestAnExpressionThatCostsTooMuch's loop):
// each record fails alone, and all of them together would take hours.
const costlyName = `string(lists.range(100000).map(i, lists.range(100).map(j, i*j)).size()) + record.name`

func manyRecords(n int) []inventory.Record {
	recs := make([]inventory.Record, n)
	for i := range recs {
		recs[i] = inventory.Record{"name": "r", "address": "h"}
	}
	return recs
}

func TestMapFailsWhenAnExpressionRunsToItsCostOnEveryRecordPastTheDeadline(t *testing.T) {
	m := compile(t, targetmapping.Mapping{Expressions: targetmapping.Expressions{Name: costlyName}, DefaultProfile: "p"})
	start := time.Now()
	res, err := m.Map(context.Background(), manyRecords(100_000), 500*time.Millisecond)
	took := time.Since(start)
	var be *inventory.BudgetError
	if !errors.As(err, &be) || be.Budget != "sync.mappingTimeout" {
		t.Fatalf("err %v, want a budget error of sync.mappingTimeout", err)
	}
	if !strings.Contains(err.Error(), "(sync.mappingTimeout)") {
		t.Errorf("the message %q does not name the budget", err)
	}
	if len(res.Targets) != 0 || len(res.Invalid) != 0 {
		t.Errorf("a mapping over its deadline gave %d targets and %d invalid records", len(res.Targets), len(res.Invalid))
	}
	if took > 2*time.Second {
		t.Errorf("mapping stopped after %s, the deadline is 500ms", took)
	}
}

func TestMapStopsAtTheCallersCancelWithoutCallingItABudget(t *testing.T) {
	m := compile(t, targetmapping.Mapping{Expressions: targetmapping.Expressions{Name: costlyName}, DefaultProfile: "p"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := m.Map(ctx, manyRecords(100_000), time.Minute); err == nil || inventory.IsBudgetExceeded(err) {
		t.Errorf("err %v, want the caller's deadline", err)
	}
}
