package sharding

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A sharded replica is ready (its pod's /readyz) once it holds its first share: it joined the members, and
// every Cluster the assignment gives it is recorded as its own and cached. A rolling update of the operator
// replaces the next replica only once the new one is ready (the Deployment's maxUnavailable: 0), so the
// Clusters a leaving replica hands over never wait behind the takeovers and cache lists of a replica still
// starting, and each membership change settles before the next (docs/sharding.md, "Rolling updates").
//
// Readiness is latched: a ready replica that takes over a dead member's Clusters stays ready, since every
// replica serves the metrics API, and the others taking over at once must not all leave its Service.

// shareReadyWithin is how long after joining a replica that does not yet hold its share becomes ready anyway:
// a Cluster it cannot cache (a namespace it may not list) must not stop a rollout for ever, and replicas that
// all start at once into a large fleet (a fresh install: 500 Clusters take them minutes to cache) must not
// keep the metrics API, which only ready pods serve, away from HPA that long. In the 300-Cluster rolling
// updates each new replica was ready within 40 s of joining, the probe's period included.
const shareReadyWithin = time.Minute

// errNotJoined is the readiness answer of a replica that has not joined the members yet.
var errNotJoined = errors.New("not a member of the operator's replicas yet")

// HoldsShare is the readiness check (a healthz.Checker) of a sharded replica: nil once it has held its share
// since it started, or once ReadyWithin (shareReadyWithin when zero) passed since it joined.
func (s *Member) HoldsShare(_ *http.Request) error {
	s.mu.Lock()
	if s.heldShare {
		s.mu.Unlock()
		return nil
	}
	joined, rounds, pending := s.joined, s.rounds, s.notTakenOver
	assigned := append([]types.NamespacedName(nil), s.assignedSelf...)
	within := s.ReadyWithin
	s.mu.Unlock()
	if within <= 0 {
		within = shareReadyWithin
	}
	if joined.IsZero() {
		return errNotJoined
	}
	uncached := 0
	for _, key := range assigned {
		if !s.Covers(key) {
			uncached++
		}
	}
	err := shareHeld(rounds, len(assigned), pending, uncached)
	waited := s.now().Sub(joined)
	if err != nil && waited < within {
		return err
	}
	s.mu.Lock()
	s.heldShare = true
	logger := s.logger
	s.mu.Unlock()
	if err != nil {
		logger.Info("ready before holding the share, so that a rollout goes on", "waited", waited, "reason", err.Error())
	}
	return nil
}

// shareHeld is nil when an assignment round ran and every Cluster it gave this replica is its own (pending
// are those not yet) and cached (uncached those not yet).
func shareHeld(rounds, assigned, pending, uncached int) error {
	switch {
	case rounds == 0:
		return errors.New("no assignment round yet")
	case pending > 0:
		return fmt.Errorf("%d of the %d Clusters assigned to this replica are not taken over yet", pending, assigned)
	case uncached > 0:
		return fmt.Errorf("%d of the %d Clusters assigned to this replica are not cached yet", uncached, assigned)
	}
	return nil
}

// recordShareLocked keeps what a round gave this replica, for HoldsShare: the Clusters assigned to it, and
// how many of them it does not reconcile yet. s.mu must be held.
func (s *Member) recordShareLocked(assigned []types.NamespacedName, notTakenOver int) {
	s.rounds++
	s.assignedSelf = assigned
	s.notTakenOver = notTakenOver
}
