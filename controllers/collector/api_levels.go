package collector

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// apiKnowledge is what a collector process's answers said of its API: its level once known, when it was last
// asked, and how many times an answer said it lacks something. It lives in the process's ledger Entry, so
// that a recreated pod or a restarted container (a new image, say) is asked again.
type apiKnowledge struct {
	known     bool
	level     gnmic.APILevel
	checkedAt time.Time
	lacking   int
}

// Re-asking a collector that lacks a feature: its process cannot gain one, but an answer the probe misread
// (or an apply refused by something in front of the collector) must not stay for good. The wait doubles from
// APIRecheckFirst up to APIRecheckMax.
const (
	APIRecheckFirst = time.Minute
	APIRecheckMax   = 16 * time.Minute
)

// API is what the pod's current collector process answered of its API, if it was asked.
func (l *Ledger) API(pod *corev1.Pod) (gnmic.APILevel, bool) {
	e := l.Entry(pod)
	return e.api.level, e.api.known
}

// APIDue tells whether the pod's collector should be asked about its API now: it never was, or an earlier
// answer said it lacks a feature and the wait since has passed.
func (l *Ledger) APIDue(pod *corev1.Pod, now time.Time) bool {
	e := l.Entry(pod)
	return !e.api.known || (e.api.lacking > 0 && !now.Before(e.api.nextCheck()))
}

// NextAPICheck is when the pod's collector, which lacks a feature, is asked again; zero when it is not.
func (l *Ledger) NextAPICheck(pod *corev1.Pod) time.Time {
	e := l.Entry(pod)
	if !e.api.known || e.api.lacking == 0 {
		return time.Time{}
	}
	return e.api.nextCheck()
}

func (k apiKnowledge) nextCheck() time.Time {
	wait := APIRecheckFirst
	for i := 1; i < k.lacking && wait < APIRecheckMax; i++ {
		wait *= 2
	}
	return k.checkedAt.Add(min(wait, APIRecheckMax))
}

// NoteAPI records what the pod's collector answered of its API at at.
func (l *Ledger) NoteAPI(pod *corev1.Pod, level gnmic.APILevel, at time.Time) {
	e := l.Entry(pod)
	e.api.known, e.api.level, e.api.checkedAt = true, level, at
	if len(level.Lacking()) > 0 {
		e.api.lacking++
	} else {
		e.api.lacking = 0
	}
	l.entries.Store(slot(pod), e)
}
