package sharding

import "time"

// The Target caches of the share (share_caches.go): one per namespace of the share, kept for a while after the
// namespace left it.

// stopTargetsLeft stops the Target caches of the namespaces that left the share linger or more before now,
// and starts the clock of those that just left. s.mu must be held.
func (s *shareCaches) stopTargetsLeft(now time.Time, linger time.Duration) {
	for namespace, targets := range s.namespaces {
		_, inShare := s.want[namespace]
		var kept bool
		if targets.left, kept = lingerTargets(inShare, targets.left, now, linger); !kept {
			targets.cache.stop()
			delete(s.namespaces, namespace)
		}
	}
}

// lingerTargets is when a cached namespace's Targets left the share, as of now (zero while the share holds
// the namespace), and whether to keep their cache: for linger after the namespace left. A rolling update
// moves a Cluster more than once, and its namespace that comes back within linger is not listed again.
func lingerTargets(inShare bool, leftAt, now time.Time, linger time.Duration) (left time.Time, kept bool) {
	switch {
	case inShare:
		return time.Time{}, true
	case leftAt.IsZero():
		return now, true
	case now.Sub(leftAt) < linger:
		return leftAt, true
	}
	return leftAt, false
}
