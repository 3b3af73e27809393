package inventory

import (
	"context"
	"errors"
)

// Record is one inventory entry as JSON decodes it: strings, float64 or json.Number, bools, nil, []any and
// map[string]any.
type Record = map[string]any

// Snapshot is the whole inventory at one moment.
type Snapshot struct {
	// Records of the inventory, in its order. Nil when Unchanged.
	Records []Record

	// Unchanged says the inventory answered that nothing changed since the last snapshot this provider
	// returned (HTTP 304 Not Modified to If-None-Match). Records is then nil: the last snapshot still holds.
	Unchanged bool

	// Announced is how many records the inventory said it holds (NetBox's count), or -1 when it did not say.
	// An answer with fewer records than it announced is truncated.
	Announced int
}

// Provider fetches an inventory. The TargetSource controller calls Fetch once per sync, never concurrently
// for one provider, and keeps the provider for as long as the TargetSource's spec and Secrets stay the same.
type Provider interface {
	// Fetch returns the whole inventory, or Unchanged, or an error: a sync that fails changes nothing.
	Fetch(ctx context.Context) (Snapshot, error)
}

// ErrNoSnapshot is returned by a provider that has nothing to return yet (a push inventory before its first
// post). The sync changes nothing and waits; it is not a failure of the inventory.
var ErrNoSnapshot = errors.New("the inventory has sent no snapshot yet")
