package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Budget bounds what one sync reads from an inventory. Each bound is enforced while the answer is read and
// decoded, after decompression: an answer over budget is abandoned at the first byte or record too many, so
// that it never costs the operator more than the budget allows.
type Budget struct {
	// MaxRecords bounds the records of one sync, every page together (0: DefaultMaxRecords).
	MaxRecords int
	// MaxBytes bounds the bytes of one sync, every page together, counted after decompression
	// (0: DefaultMaxBytes).
	MaxBytes int64
}

// The defaults of spec.sync.maxRecords and spec.sync.maxBytes.
const (
	DefaultMaxRecords = 100_000
	DefaultMaxBytes   = 256 << 20
)

// withDefaults fills what is unset.
func (b Budget) withDefaults() Budget {
	if b.MaxRecords <= 0 {
		b.MaxRecords = DefaultMaxRecords
	}
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultMaxBytes
	}
	return b
}

// BudgetError is an answer that went over a budget. The sync that read it changes nothing.
type BudgetError struct {
	// Budget names the field that sets the bound, as a user finds it in the spec: "sync.maxRecords".
	Budget string
	// Exceeded says what went over, in words: "more than 100000 records".
	Exceeded string
}

func (e *BudgetError) Error() string { return e.Exceeded + " (" + e.Budget + ")" }

// IsBudgetExceeded is true when err, or an error it wraps, is a *BudgetError.
func IsBudgetExceeded(err error) bool {
	var be *BudgetError
	return errors.As(err, &be)
}

// syncBudget is what is left of a Budget during one sync.
type syncBudget struct {
	limits  Budget
	bytes   int64
	records int
	// exceeded is the first budget error, kept for a caller whose reader's errors pass through code that
	// does not wrap them (a client library).
	exceeded error
}

func newSyncBudget(b Budget) *syncBudget { return &syncBudget{limits: b.withDefaults()} }

// record counts one record more.
func (s *syncBudget) record() error {
	s.records++
	if s.records > s.limits.MaxRecords {
		return s.exceed(TooManyRecords(s.limits.MaxRecords))
	}
	return nil
}

func (s *syncBudget) exceed(err *BudgetError) error {
	if s.exceeded == nil {
		s.exceeded = err
	}
	return err
}

// budgetReader counts the bytes read through it against a page's bound and the sync's. It never asks the
// reader under it for more than one byte past what either bound still allows, so a body over budget is left
// unread past that byte.
type budgetReader struct {
	r io.Reader
	// page is what this page has read; pageMax its bound (pageBudget names it).
	page, pageMax int64
	pageBudget    string
	sync          *syncBudget
}

func (b *budgetReader) Read(p []byte) (int, error) {
	left := min(b.pageMax-b.page, b.sync.limits.MaxBytes-b.sync.bytes)
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := b.r.Read(p)
	b.page += int64(n)
	b.sync.bytes += int64(n)
	switch {
	case b.sync.bytes > b.sync.limits.MaxBytes:
		return 0, b.sync.exceed(&BudgetError{Budget: "sync.maxBytes", Exceeded: fmt.Sprintf("more than %d bytes in one sync", b.sync.limits.MaxBytes)})
	case b.page > b.pageMax:
		return 0, b.sync.exceed(&BudgetError{Budget: b.pageBudget, Exceeded: fmt.Sprintf("a page larger than %d bytes", b.pageMax)})
	}
	return n, err
}

// overTime is err as a BudgetError when the fetch's own deadline (timeout, named budget) passed while the
// caller's context is still live: a slow answer, not a shutdown.
func overTime(parent, fetch context.Context, err error, timeout time.Duration, budget string) error {
	if err == nil || parent.Err() != nil || !errors.Is(fetch.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", &BudgetError{Budget: budget, Exceeded: fmt.Sprintf("an answer that took longer than %s", timeout)}, err)
}

// LimitSyncBytes reads r until more than max bytes (0: DefaultMaxBytes) came through it, then fails with the
// *BudgetError of sync.maxBytes: for a reader of one sync's answer that is not a page (a stored push snapshot).
func LimitSyncBytes(r io.Reader, max int64) io.Reader {
	sync := newSyncBudget(Budget{MaxBytes: max})
	return &budgetReader{r: r, pageMax: sync.limits.MaxBytes, pageBudget: "sync.maxBytes", sync: sync}
}

// TooManyRecords is the *BudgetError of an answer with more than max records (sync.maxRecords).
func TooManyRecords(max int) *BudgetError {
	return &BudgetError{Budget: "sync.maxRecords", Exceeded: fmt.Sprintf("more than %d records", max)}
}
