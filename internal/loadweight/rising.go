package loadweight

import "time"

// Rising reports whether the target's counter on the pod rose between its last two samples, the last one
// taken within the window before now: the collector received responses for the target lately, whatever
// state it shows (gNMIc can show a subscription stopped while its data flows).
func (m *Meter) Rising(target, pod string, now time.Time) bool {
	s := m.series[target][pod]
	if len(s) < 2 {
		return false
	}
	last, prev := s[len(s)-1], s[len(s)-2]
	return last.count > prev.count && now.Sub(last.at) <= m.settings.Window
}
