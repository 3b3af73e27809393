//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// statusWatch follows a namespace's Target statuses through one watch, and tells when n of them say
// Assigned and collecting for a Cluster. A scenario that measures how soon statuses are right uses it instead
// of listing the Targets again and again: a list of thousands of Targets every quarter of a second is work for
// the API server that the operator's status writes wait behind, on a machine of two cores.
type statusWatch struct {
	cluster string
	cancel  context.CancelFunc
	done    chan struct{}

	mu sync.Mutex
	// right are the Targets whose status says Assigned and collecting, as last seen.
	right map[string]bool
	// allRight is closed at the first moment n Targets are right, and at is then.
	n        int
	allRight chan struct{}
	at       time.Time
	err      error
	// modified counts the Targets' modifications seen (their status writes, when nothing else writes them).
	modified int
}

// watchStatuses starts following the Target statuses of namespace for cluster until n of them are Assigned
// and collecting. It watches from the namespace's current state, so it may start before the Targets exist.
func watchStatuses(namespace, cluster string, n int) *statusWatch {
	wc, err := client.NewWithWatch(cp.Config, client.Options{Scheme: k8sClient.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	wctx, cancel := context.WithCancel(ctx)
	s := &statusWatch{cluster: cluster, cancel: cancel, done: make(chan struct{}), right: map[string]bool{}, n: n,
		allRight: make(chan struct{})}
	go func() {
		defer close(s.done)
		for wctx.Err() == nil {
			if err := s.follow(wctx, wc, namespace); err != nil && wctx.Err() == nil {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
				return
			}
		}
	}()
	return s
}

// follow lists the namespace's Targets, then watches from the list's resourceVersion until the watch ends.
func (s *statusWatch) follow(ctx context.Context, wc client.WithWatch, namespace string) error {
	var list operatorv1alpha1.TargetList
	if err := wc.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("list Targets: %w", err)
	}
	s.mu.Lock()
	clear(s.right)
	for i := range list.Items {
		s.see(&list.Items[i])
	}
	s.mu.Unlock()
	w, err := wc.Watch(ctx, &operatorv1alpha1.TargetList{}, client.InNamespace(namespace),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true}})
	if err != nil {
		return fmt.Errorf("watch Targets: %w", err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		t, ok := ev.Object.(*operatorv1alpha1.Target)
		if !ok {
			if ev.Type == watch.Error {
				return nil // an expired resourceVersion: list again
			}
			continue
		}
		s.mu.Lock()
		switch ev.Type {
		case watch.Added, watch.Modified: // a Bookmark carries no Target
			if ev.Type == watch.Modified {
				s.modified++
			}
			s.see(t)
		case watch.Deleted:
			delete(s.right, t.Name)
		}
		s.mu.Unlock()
	}
	return nil
}

// see records whether t's status is right; the caller holds s.mu.
func (s *statusWatch) see(t *operatorv1alpha1.Target) {
	st := t.Status.ClusterStates[s.cluster]
	if st.State == operatorv1alpha1.TargetAssigned && st.Collecting {
		s.right[t.Name] = true
	} else {
		delete(s.right, t.Name)
	}
	if len(s.right) >= s.n && s.at.IsZero() {
		s.at = time.Now()
		close(s.allRight)
	}
}

// modifications are how many modifications of the namespace's Targets the watch has seen so far.
func (s *statusWatch) modifications() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modified
}

// wait waits up to timeout for n Targets to be right at once, stops the watch and gives when they were.
func (s *statusWatch) wait(timeout time.Duration) time.Time {
	defer func() {
		s.cancel()
		<-s.done
	}()
	select {
	case <-s.allRight:
	case <-time.After(timeout):
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	Expect(s.err).NotTo(HaveOccurred())
	Expect(s.at.IsZero()).To(BeFalse(), "%d of %d Targets Assigned and collecting after %s", len(s.right), s.n, timeout)
	return s.at
}
