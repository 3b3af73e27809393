package push_test

import (
	"errors"
	"io"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
	"github.com/gnmic-operator/gnmic-operator/test/hostile"
)

func wantBudget(t *testing.T, err error, budget string) {
	t.Helper()
	var be *inventory.BudgetError
	if !errors.As(err, &be) || be.Budget != budget {
		t.Fatalf("err %v, want a budget error of %s", err, budget)
	}
}

func TestDecodeStopsAStoredSnapshotThatInflatesPastItsBudget(t *testing.T) {
	bomb, err := io.ReadAll(hostile.GzipList(1 << 30)())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a snapshot of %d KiB compressed, 1 GiB inflated", len(bomb)>>10)
	_, err = push.Decode(bomb, inventory.Budget{})
	wantBudget(t, err, "sync.maxRecords")
	_, err = push.Decode(bomb, inventory.Budget{MaxBytes: 1 << 20, MaxRecords: 10_000_000})
	wantBudget(t, err, "sync.maxBytes")
}

func TestParseSnapshotRefusesMoreRecordsThanTheBudget(t *testing.T) {
	list, _ := io.ReadAll(hostile.List(11))
	object := append(append([]byte(`{"records":`), list...), '}')
	for name, body := range map[string][]byte{"a list": list, "an object": object} {
		t.Run(name, func(t *testing.T) {
			_, err := push.ParseSnapshot(body, "a", 10)
			wantBudget(t, err, "sync.maxRecords")
		})
	}
}

func TestParseDeltaRefusesMoreUpsertsThanTheBudget(t *testing.T) {
	_, err := push.ParseDelta([]byte(`{"upsert":[{"a":1},{"a":2},{"a":3}]}`), "a", 2)
	wantBudget(t, err, "sync.maxRecords")
}
