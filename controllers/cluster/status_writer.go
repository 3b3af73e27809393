package cluster

import (
	"context"
	"sync"
)

// statusWriter writes one Cluster's Target statuses in the background, one batch at a time, so that a
// reconcile hands its status writes over and returns: the next reconcile pushes what arrived meanwhile to the
// collectors while the statuses are still being written. With the writes inside the reconcile, a bulk arrival
// had to choose between its statuses (thousands of writes, seconds at the client's rate) and its collection
// (every push waiting for them).
//
// Its rule: what a batch wrote is folded into the Cluster's memory by the next status pass (the only code
// that reads it), never by the batch itself, since reconciles own the memory; while a batch runs, a pass
// starts none (the Targets it would write may be in the running batch), and the batch wakes the Cluster when
// it ends if a pass found more to write or a write failed. stop cancels a running batch and waits for it:
// a Cluster forgotten (deleted, or handed to another replica) gets no write of this replica after that.
type statusWriter struct {
	mu sync.Mutex
	// running is the running batch's end and its cancel; nil while none runs.
	running *statusBatch
	// written are the writes that succeeded since the last pass took them, and failed the first error.
	written []targetStatusWrite
	failed  error
	// more is true once a pass found writes it could not start: the batch's end wakes the Cluster.
	more bool
	// stopped is true once the Cluster was forgotten: no batch starts after that.
	stopped bool
}

// statusBatch is one running batch of status writes.
type statusBatch struct {
	done   chan struct{}
	cancel context.CancelFunc
}

// take gives the writes that succeeded and the first failure since it was last called, and whether a batch
// is running still.
func (s *statusWriter) take() (written []targetStatusWrite, failed error, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	written, failed = s.written, s.failed
	s.written, s.failed = nil, nil
	return written, failed, s.running != nil
}

// start runs write(ctx, writes) in the background unless a batch is running (or the writer stopped), and
// tells whether it did. A pass that could not start its writes, or that left writes for later, calls later:
// the batch's end then calls wake. ctx must outlive the reconcile: the controller's context does (the
// Cluster controller sets no reconcile timeout); its end cancels the batch, as stop does.
func (s *statusWriter) start(ctx context.Context, writes []targetStatusWrite,
	write func(context.Context, []targetStatusWrite) ([]targetStatusWrite, error), wake func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != nil || s.stopped {
		return false
	}
	ctx, cancel := context.WithCancel(ctx)
	batch := &statusBatch{done: make(chan struct{}), cancel: cancel}
	s.running = batch
	go func() {
		defer close(batch.done)
		defer cancel()
		written, err := write(ctx, writes)
		s.mu.Lock()
		s.running = nil
		s.written = append(s.written, written...)
		if s.failed == nil {
			s.failed = err
		}
		again := (s.more || err != nil) && !s.stopped
		s.more = false
		s.mu.Unlock()
		if again {
			wake()
		}
	}()
	return true
}

// later notes that a pass found writes it did not start: the running batch's end wakes the Cluster. It
// tells whether a batch is running; when none is, the caller must look again itself.
func (s *statusWriter) later() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		return false
	}
	s.more = true
	return true
}

// stop cancels the running batch, waits for its end, and starts no other.
func (s *statusWriter) stop() {
	s.mu.Lock()
	s.stopped = true
	batch := s.running
	s.mu.Unlock()
	if batch != nil {
		batch.cancel()
		<-batch.done
	}
}
