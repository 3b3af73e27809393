package loadweight

import "time"

// sample is one reading of a counter.
type sample struct {
	at    time.Time
	count float64
}

// series are the samples of one target's counter on one collector pod, oldest first.
type series []sample

// Observe records one scrape of one collector pod at a moment: counts holds, per target, the sum over its
// subscriptions of the received-responses counter. A scrape not later than the pod's previous one for a
// target is ignored, so the samples of a series always go forward in time.
func (m *Meter) Observe(pod string, at time.Time, counts map[string]float64) {
	for target, count := range counts {
		if count < 0 || count != count { // a counter is never negative; NaN is not a reading
			continue
		}
		pods := m.series[target]
		if pods == nil {
			pods = map[string]series{}
			m.series[target] = pods
		}
		s := pods[pod]
		if len(s) > 0 && !at.After(s[len(s)-1].at) {
			continue
		}
		pods[pod] = append(s, sample{at: at, count: count})
		m.stale[target] = true
	}
}

// prune drops what the window no longer needs: of each series, the samples before the last one at or
// before the window's start (that one stays, as the start of the first increase); series whose last sample
// is that old altogether.
func (m *Meter) prune(now time.Time) {
	start := now.Add(-m.settings.Window)
	for target, pods := range m.series {
		for pod, s := range pods {
			if !s[len(s)-1].at.After(start) {
				delete(pods, pod)
				m.stale[target] = true
				continue
			}
			first := 0
			for first+1 < len(s) && !s[first+1].at.After(start) {
				first++
			}
			if first > 0 {
				pods[pod] = append(s[:0:0], s[first:]...)
				m.stale[target] = true
			}
		}
		if len(pods) == 0 {
			delete(m.series, target)
		}
	}
}

// cachedRateOf is rate, computed again only when the target's series changed since it last was.
func (m *Meter) cachedRateOf(target string) (perSecond float64, ok bool) {
	c, cached := m.rates[target]
	if !cached || m.stale[target] {
		c.perSecond, c.measured = m.rate(target)
		m.rates[target] = c
		delete(m.stale, target)
	}
	return c.perSecond, c.measured
}

// rate is the target's responses per second over the window: the increase of all its series over the time
// from the earliest to the latest sample. ok is false until the samples span half the window.
func (m *Meter) rate(target string) (perSecond float64, ok bool) {
	var increase float64
	var from, to time.Time
	for _, s := range m.series[target] {
		if len(s) < 2 {
			continue
		}
		for i := 1; i < len(s); i++ {
			if d := s[i].count - s[i-1].count; d >= 0 {
				increase += d
			} else {
				increase += s[i].count // reset: the counter started again from zero
			}
		}
		if from.IsZero() || s[0].at.Before(from) {
			from = s[0].at
		}
		if s[len(s)-1].at.After(to) {
			to = s[len(s)-1].at
		}
	}
	span := to.Sub(from)
	if from.IsZero() || span < m.settings.Window/2 || span <= 0 {
		return 0, false
	}
	return increase / span.Seconds(), true
}
