package inventory_test

import (
	"context"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// BenchmarkHTTPFetchTenThousandNetBoxDevices reads the 10,000 devices of `make bench-targetsource`, 1000 a page:
// what the budgets' streaming decode costs on the ordinary path.
func BenchmarkHTTPFetchTenThousandNetBoxDevices(b *testing.B) {
	s := fakenetbox.Start(10_000, "secret")
	defer s.Close()
	h, err := inventory.NewHTTP(netboxOptions(s, 1000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		snap, err := h.Fetch(context.Background())
		if err != nil || len(snap.Records) != 10_000 {
			b.Fatalf("%d records, err %v", len(snap.Records), err)
		}
	}
}
