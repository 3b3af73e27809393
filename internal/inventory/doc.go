// Package inventory reads device inventories for TargetSources: a Provider returns the whole inventory as a
// Snapshot of Records each time it is asked, or says it has not changed. It knows nothing of Kubernetes: the
// TargetSource controller resolves Secrets into a provider's options, maps the records to Targets
// (internal/targetmapping) and plans the writes (internal/targetsync).
//
// Providers: HTTP pull (http.go: pages linked by a next field, ETag and If-None-Match, bearer or basic auth,
// a CA bundle). The push endpoint and Consul add theirs beside it.
//
// Everything an inventory sends is bounded while it is read (budget.go): the bytes of a page and of a sync,
// counted after decompression, the records of a sync, counted as they are decoded, and the time of a sync. An
// answer over a budget fails with a *BudgetError naming the budget, at the first byte or record too many.
package inventory
