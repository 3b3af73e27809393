package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// blockedWrite is a batch's write that waits for release (or for its context's end), and then succeeds or
// fails with err.
type blockedWrite struct {
	release chan struct{}
	err     error
}

func (b blockedWrite) write(ctx context.Context, writes []targetStatusWrite) ([]targetStatusWrite, error) {
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if b.err != nil {
		return writes[:len(writes)/2], b.err
	}
	return writes, nil
}

func statusWrites(names ...string) []targetStatusWrite {
	var out []targetStatusWrite
	for _, n := range names {
		out = append(out, targetStatusWrite{target: &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: n}}})
	}
	return out
}

// waitFor fails the test unless ch is closed or sent on within a few seconds.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

func TestStatusWriter(t *testing.T) {
	t.Run("one batch at a time; what it wrote is taken once; its end wakes only when a pass left writes", func(t *testing.T) {
		var s statusWriter
		b := blockedWrite{release: make(chan struct{})}
		woken := make(chan struct{}, 4)
		wake := func() { woken <- struct{}{} }
		if !s.start(context.Background(), statusWrites("a", "b"), b.write, wake) {
			t.Fatal("the first batch did not start")
		}
		if s.start(context.Background(), statusWrites("c"), b.write, wake) {
			t.Fatal("a second batch started while the first runs")
		}
		if written, failed, busy := s.take(); len(written) != 0 || failed != nil || !busy {
			t.Fatalf("while running: written %d, failed %v, busy %v", len(written), failed, busy)
		}
		if !s.later() {
			t.Fatal("later found no running batch")
		}
		close(b.release)
		waitFor(t, woken, "the wake at the batch's end")
		written, failed, busy := s.take()
		if len(written) != 2 || failed != nil || busy {
			t.Fatalf("after the batch: written %d, failed %v, busy %v", len(written), failed, busy)
		}
		if written, _, _ := s.take(); len(written) != 0 {
			t.Fatalf("taken twice: %d", len(written))
		}
		if s.later() {
			t.Fatal("later found a batch running after its end")
		}
		// A batch no pass left writes behind ends without a wake.
		done := make(chan struct{})
		if !s.start(context.Background(), statusWrites("c"), func(ctx context.Context, w []targetStatusWrite) ([]targetStatusWrite, error) {
			defer close(done)
			return w, nil
		}, wake) {
			t.Fatal("no batch started after the first ended")
		}
		waitFor(t, done, "the second batch")
		time.Sleep(50 * time.Millisecond)
		select {
		case <-woken:
			t.Fatal("a batch with nothing left behind woke the Cluster")
		default:
		}
	})

	t.Run("a failed write wakes the Cluster, and the next pass gets the error and what succeeded", func(t *testing.T) {
		var s statusWriter
		conflict := errors.New("conflict")
		b := blockedWrite{release: make(chan struct{}), err: conflict}
		woken := make(chan struct{}, 1)
		s.start(context.Background(), statusWrites("a", "b", "c", "d"), b.write, func() { woken <- struct{}{} })
		close(b.release)
		waitFor(t, woken, "the wake after a failure")
		written, failed, _ := s.take()
		if len(written) != 2 || !errors.Is(failed, conflict) {
			t.Fatalf("written %d, failed %v", len(written), failed)
		}
		if _, failed, _ := s.take(); failed != nil {
			t.Fatalf("the failure was given twice: %v", failed)
		}
	})

	t.Run("stop cancels the running batch, waits for it, and starts no other", func(t *testing.T) {
		var s statusWriter
		b := blockedWrite{release: make(chan struct{})}
		woken := make(chan struct{}, 1)
		s.start(context.Background(), statusWrites("a"), b.write, func() { woken <- struct{}{} })
		s.later()
		stopped := make(chan struct{})
		go func() { s.stop(); close(stopped) }()
		waitFor(t, stopped, "stop")
		if _, _, busy := s.take(); busy {
			t.Fatal("a batch runs after stop returned")
		}
		if s.start(context.Background(), statusWrites("b"), b.write, func() {}) {
			t.Fatal("a batch started after stop")
		}
		select {
		case <-woken:
			t.Fatal("a stopped writer woke its forgotten Cluster")
		default:
		}
	})
}
