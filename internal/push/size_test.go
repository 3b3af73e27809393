package push

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// netboxDevice is a device record as a NetBox export trimmed to what a mapping reads (docs/target-sources.md
// recommends posting that, not the API's full objects).
// Addresses, ids and serial numbers are random (seeded): sequential ones would compress far better than a
// real inventory does.
func netboxDevice(rng *rand.Rand, i int) Record {
	r, _ := json.Marshal(map[string]any{
		"id":         rng.IntN(1 << 24),
		"name":       fmt.Sprintf("leaf-%s-%04d", []string{"ams", "fra", "lon", "par"}[i%4], i),
		"serial":     fmt.Sprintf("%012X", rng.Uint64()>>16),
		"primary_ip": map[string]any{"address": fmt.Sprintf("10.%d.%d.%d/32", rng.IntN(256), rng.IntN(256), rng.IntN(256))},
		"site":       map[string]any{"slug": []string{"ams1", "fra2", "lon3", "par1"}[i%4]},
		"role":       map[string]any{"slug": []string{"leaf", "spine", "border"}[i%3]},
		"platform":   map[string]any{"slug": []string{"srl", "eos", "junos"}[i%3]},
		"tags":       []map[string]any{{"slug": "gnmi"}},
		"status":     map[string]any{"value": "active"},
	})
	return r
}

// 10,000 trimmed NetBox devices fit the one ConfigMap a TargetSource's pushed snapshot is stored in. The
// measured size is in docs/target-sources.md ("Push", "How much fits").
func TestTenThousandDevicesFitOneConfigMap(t *testing.T) {
	const n = 10000
	records := make([]Record, n)
	plain := 0
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range records {
		records[i] = netboxDevice(rng, i)
		plain += len(records[i]) + 1
	}
	s, err := Encode(records)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Compressed) > MaxCompressed {
		t.Fatalf("%d records compress to %d bytes, more than %d", n, len(s.Compressed), MaxCompressed)
	}
	t.Logf("%d records: %d bytes of JSON (%d per record), %d compressed (%.1f per record): about %d records fit",
		n, plain, plain/n, len(s.Compressed), float64(len(s.Compressed))/n, MaxCompressed*n/len(s.Compressed))
}
