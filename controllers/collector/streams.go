package collector

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// Streams follows the target-state event stream of every ready collector pod it is asked to, and tells on any
// event which Cluster's collector changed, so that a target that connects, fails or recovers shows in its
// status within moments. The stream can drop events under load; the reconciler's periodic look at each
// collector is the backstop. It runs as a manager runnable on the leader, which is the one that reconciles.
//
// Its forgetting rule: a Cluster's streams are exactly those Track was last given, and Forget drops them all.
type Streams struct {
	mu       sync.Mutex
	ctx      context.Context
	watchers map[string]*streamWatcher
	// changed is told the Cluster of a stream that brought an event, broke or (re)connected.
	changed func(cluster types.NamespacedName)
}

type streamWatcher struct {
	cluster types.NamespacedName
	uid     types.UID
	// tls is the client configuration the stream is opened with: the Cluster's as long as its CA and the
	// operator's client certificate stay the same.
	tls    *tls.Config
	cancel context.CancelFunc
	// connected is true while the collector streams; changed is true when the stream brought an event (or
	// broke, or (re)connected) since the reconciler last read the collector; aliveAt is when the stream last
	// carried anything, an event or a keepalive. All three are guarded by Streams.mu.
	connected, changed bool
	aliveAt            time.Time
	// components are the states of the collector's outputs and inputs as their streams last told, by kind
	// and name; a kind is present while its stream is connected (its snapshot is replayed on every connect).
	// Guarded by Streams.mu.
	components map[string]map[string]gnmic.ComponentState
}

// componentKinds are the kinds whose runtime state the collector streams besides its targets': the only
// place it tells that an output or input it accepted could not start.
var componentKinds = []string{gnmic.KindOutputs, gnmic.KindInputs}

// streamAliveWithin is how recently a stream must have carried something to be trusted to announce every
// change: the collector writes a keepalive every 15 s, and a stream to a lost node stays open in silence.
const streamAliveWithin = 20 * time.Second

// streamBackoffMax bounds the wait before reconnecting to a collector whose stream broke.
const streamBackoffMax = 30 * time.Second

// NewStreams follows no collector yet; changed is told which Cluster's collector announced a change.
func NewStreams(changed func(cluster types.NamespacedName)) *Streams {
	return &Streams{watchers: map[string]*streamWatcher{}, changed: changed}
}

// Start implements manager.Runnable: streams live as long as the manager.
func (s *Streams) Start(ctx context.Context) error {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, w := range s.watchers {
		w.cancel()
		delete(s.watchers, key)
	}
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (s *Streams) NeedLeaderElection() bool { return true }

// Track makes the set of followed pods of one Cluster exactly its ready pods, each stream opened with the
// client configuration tlsConfig (nil for plain HTTP): open gives a client of it without a request timeout for
// a pod. A stream opened with another configuration (a CA or client certificate renewed since) is opened again.
func (s *Streams) Track(ctx context.Context, cluster types.NamespacedName, ready []*corev1.Pod, tlsConfig *tls.Config,
	open func(*corev1.Pod) (*gnmic.Client, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		return
	}
	want := map[string]*corev1.Pod{}
	for _, p := range ready {
		want[p.Namespace+"/"+p.Name] = p
	}
	for key, w := range s.watchers {
		if w.cluster != cluster {
			continue
		}
		if p, ok := want[key]; !ok || p.UID != w.uid || w.tls != tlsConfig {
			w.cancel()
			delete(s.watchers, key)
		}
	}
	for key, pod := range want {
		if _, ok := s.watchers[key]; ok {
			continue
		}
		wctx, cancel := context.WithCancel(s.ctx)
		w := &streamWatcher{cluster: cluster, uid: pod.UID, tls: tlsConfig, cancel: cancel, changed: true,
			components: map[string]map[string]gnmic.ComponentState{}}
		s.watchers[key] = w
		podCtx := log.IntoContext(wctx, log.FromContext(ctx).WithValues("pod", pod.Name))
		go s.follow(podCtx, w, pod, open)
		for _, kind := range componentKinds {
			go s.followComponents(podCtx, w, kind, pod, open)
		}
	}
}

// Quiet tells whether the pod's collector announced no change since the reconciler last read it: its stream
// is connected, carried something within streamAliveWithin, and brought no event since MarkRead. The
// collector may still have dropped an event; the reconciler's poll reads it regardless.
func (s *Streams) Quiet(pod *corev1.Pod, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.watchers[pod.Namespace+"/"+pod.Name]
	return ok && w.uid == pod.UID && w.connected && !w.changed && now.Sub(w.aliveAt) < streamAliveWithin
}

// MarkRead notes that the reconciler is about to read the pod's collector: only events from now on count as
// changes it has not seen.
func (s *Streams) MarkRead(pod *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.watchers[pod.Namespace+"/"+pod.Name]; ok && w.uid == pod.UID {
		w.changed = false
	}
}

// Components are the states of the pod's outputs and inputs as its collector streams them, by kind
// (gnmic.KindOutputs, gnmic.KindInputs) and name. known is false unless both streams are connected: nothing
// can be concluded then.
func (s *Streams) Components(pod *corev1.Pod) (states map[string]map[string]gnmic.ComponentState, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.watchers[pod.Namespace+"/"+pod.Name]
	if !ok || w.uid != pod.UID {
		return nil, false
	}
	states = map[string]map[string]gnmic.ComponentState{}
	for _, kind := range componentKinds {
		byName, connected := w.components[kind]
		if !connected {
			return nil, false
		}
		states[kind] = make(map[string]gnmic.ComponentState, len(byName))
		for name, st := range byName {
			states[kind][name] = st
		}
	}
	return states, true
}

// Forget stops following the pods of a Cluster this replica no longer reconciles.
func (s *Streams) Forget(cluster types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, w := range s.watchers {
		if w.cluster == cluster {
			w.cancel()
			delete(s.watchers, key)
		}
	}
}

// follow reads one pod's stream until its context ends, reconnecting with backoff when the stream breaks.
func (s *Streams) follow(ctx context.Context, w *streamWatcher, pod *corev1.Pod,
	open func(*corev1.Pod) (*gnmic.Client, error)) {
	cluster := w.cluster
	note := func(connected, changed bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.connected = connected
		w.changed = w.changed || changed
		w.aliveAt = time.Now()
	}
	backoff := time.Second
	for ctx.Err() == nil {
		began := time.Now()
		c, err := open(pod)
		if err == nil {
			err = c.WatchTargetChanges(ctx, func() {
				note(true, true)
				s.changed(cluster)
			}, gnmic.OnConnected(func() { note(true, true) }), gnmic.OnAlive(func() { note(true, false) }))
		}
		note(false, true)
		if ctx.Err() != nil {
			return
		}
		log.FromContext(ctx).V(1).Info("collector event stream ended, reconnecting", "error", err, "in", backoff)
		// A broken stream may be a collector gone silent: the Cluster looks at it now rather than at its next
		// poll, so that its silence (and the grace period of its pod) starts without delay.
		s.changed(cluster)
		if time.Since(began) > streamBackoffMax {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, streamBackoffMax)
	}
}

// followComponents reads one pod's output or input state stream until its context ends, reconnecting with
// backoff when it breaks, and keeps the states it tells in the watcher: the snapshot replayed on connect
// replaces what an earlier connection told. Every event wakes the Cluster.
func (s *Streams) followComponents(ctx context.Context, w *streamWatcher, kind string, pod *corev1.Pod,
	open func(*corev1.Pod) (*gnmic.Client, error)) {
	cluster := w.cluster
	backoff := time.Second
	for ctx.Err() == nil {
		began := time.Now()
		c, err := open(pod)
		if err == nil {
			err = c.WatchComponents(ctx, kind, func(ev gnmic.ComponentEvent) {
				s.mu.Lock()
				if byName, ok := w.components[kind]; ok {
					if ev.Type == gnmic.EventDelete {
						delete(byName, ev.Name)
					} else {
						byName[ev.Name] = ev.Object
					}
				}
				s.mu.Unlock()
				s.changed(cluster)
			}, gnmic.OnConnected(func() {
				s.mu.Lock()
				defer s.mu.Unlock()
				w.components[kind] = map[string]gnmic.ComponentState{}
			}))
		}
		s.mu.Lock()
		delete(w.components, kind)
		s.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		log.FromContext(ctx).V(1).Info("collector state stream ended, reconnecting", "kind", kind, "error", err, "in", backoff)
		if time.Since(began) > streamBackoffMax {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, streamBackoffMax)
	}
}
