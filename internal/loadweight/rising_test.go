package loadweight

import (
	"testing"
	"time"
)

func TestRisingTellsWhetherATargetsCounterOnAPodRoseBetweenItsLastTwoScrapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		scrapes []scrape
		pod     string
		at      int
		want    bool
	}{
		{"rose", []scrape{{"p0", 0, 10}, {"p0", 60, 20}}, "p0", 60, true},
		{"flat", []scrape{{"p0", 0, 10}, {"p0", 60, 20}, {"p0", 120, 20}}, "p0", 120, false},
		{"one sample", []scrape{{"p0", 0, 10}}, "p0", 0, false},
		{"on another pod", []scrape{{"p0", 0, 10}, {"p0", 60, 20}}, "p1", 60, false},
		{"reset", []scrape{{"p0", 0, 10}, {"p0", 60, 3}}, "p0", 60, false},
		{"last scrape older than the window", []scrape{{"p0", 0, 10}, {"p0", 60, 20}}, "p0", 60 + 301, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMeter(Settings{Window: 5 * time.Minute})
			for _, s := range tc.scrapes {
				m.Observe(s.pod, t0.Add(time.Duration(s.seconds)*time.Second), map[string]float64{"r": s.count})
			}
			if got := m.Rising("r", tc.pod, t0.Add(time.Duration(tc.at)*time.Second)); got != tc.want {
				t.Fatalf("Rising = %v, want %v", got, tc.want)
			}
		})
	}
}
