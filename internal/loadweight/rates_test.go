package loadweight

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// scrape is one Observe: pod, seconds after t0, counter value of target "r".
type scrape struct {
	pod     string
	seconds int
	count   float64
}

func TestRateOfATargetFromItsCounterSamples(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scrapes  []scrape
		at       int // seconds after t0 of the Weigh
		want     float64
		measured bool
	}{{
		name:    "a steady counter",
		scrapes: []scrape{{"p0", 0, 100}, {"p0", 60, 700}, {"p0", 120, 1300}, {"p0", 180, 1900}},
		at:      180, want: 10, measured: true,
	}, {
		name:    "not measured before the samples span half the window",
		scrapes: []scrape{{"p0", 0, 100}, {"p0", 60, 700}, {"p0", 120, 1300}},
		at:      120,
	}, {
		name:    "a counter reset counts from zero, as Prometheus does",
		scrapes: []scrape{{"p0", 0, 5000}, {"p0", 60, 5600}, {"p0", 120, 300}, {"p0", 180, 900}},
		at:      180, want: (600 + 300 + 600) / 180.0, measured: true,
	}, {
		name: "a target that moved counts on both pods, the old series frozen",
		scrapes: []scrape{{"p0", 0, 1000}, {"p0", 60, 1600}, {"p0", 120, 2200}, {"p1", 120, 0},
			{"p0", 180, 2200}, {"p1", 180, 600}, {"p0", 240, 2200}, {"p1", 240, 1200}},
		at: 240, want: 2400 / 240.0, measured: true,
	}, {
		name: "a target that moved back resumes its old pod's counter without a reset",
		scrapes: []scrape{{"p0", 0, 1000}, {"p0", 60, 1600}, {"p1", 60, 50}, {"p0", 120, 1600}, {"p1", 120, 650},
			{"p0", 180, 2200}, {"p1", 180, 650}},
		at: 180, want: 1800 / 180.0, measured: true,
	}, {
		name:    "a scrape not later than the previous one is ignored",
		scrapes: []scrape{{"p0", 0, 0}, {"p0", 120, 1200}, {"p0", 60, 9999}, {"p0", 180, 1800}},
		at:      180, want: 10, measured: true,
	}, {
		name:    "samples older than the window are forgotten, but one before it starts the first increase",
		scrapes: []scrape{{"p0", 0, 0}, {"p0", 60, 60000}, {"p0", 240, 61800}, {"p0", 360, 63000}, {"p0", 420, 63600}},
		at:      420, want: (63600 - 61800) / 180.0, measured: true,
	}, {
		name:    "a series silent for a whole window is forgotten",
		scrapes: []scrape{{"p0", 0, 0}, {"p0", 60, 600}, {"p0", 120, 1200}, {"p0", 180, 1800}},
		at:      500,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMeter(Settings{Window: 5 * time.Minute})
			for _, s := range tc.scrapes {
				m.Observe(s.pod, t0.Add(time.Duration(s.seconds)*time.Second), map[string]float64{"r": s.count})
			}
			m.prune(t0.Add(time.Duration(tc.at) * time.Second))
			got, measured := m.rate("r")
			if measured != tc.measured || math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("rate %v measured %v, want %v %v", got, measured, tc.want, tc.measured)
			}
		})
	}
}

func TestObserveIgnoresReadingsThatAreNotCounts(t *testing.T) {
	m := NewMeter(Settings{})
	m.Observe("p0", t0, map[string]float64{"neg": -1, "nan": math.NaN(), "ok": 1})
	if len(m.series) != 1 || m.series["ok"] == nil {
		t.Fatalf("series %v, want only ok's", m.series)
	}
}

func TestQuantizeRoundsToTheNearestPowerOfTwoWithinOneAndTheCap(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		max   int
		want  int
	}{
		{0, 64, 1}, {math.NaN(), 64, 1}, {0.2, 64, 1}, {1, 64, 1}, {1.41, 64, 1}, {1.42, 64, 2}, {2.8, 64, 2},
		{2.9, 64, 4}, {10, 64, 8}, {11.4, 64, 16}, {45, 64, 32}, {46, 64, 64}, {1e9, 64, 64}, {math.Inf(1), 64, 64},
		{40, 48, 32}, {60, 48, 48}, {1e30, 1 << 40, 1 << 40},
	} {
		if got := Quantize(tc.ratio, tc.max); got != tc.want {
			t.Errorf("Quantize(%v, %d) = %d, want %d", tc.ratio, tc.max, got, tc.want)
		}
	}
}

func TestSettingsRefuseNegativeValuesAndDefaultZeroOnes(t *testing.T) {
	for _, bad := range []Settings{{Window: -1}, {Hysteresis: -1}, {MaxWeight: -1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	got := Settings{}.WithDefaults()
	if got != (Settings{Window: DefaultWindow, Hysteresis: DefaultHysteresis, MaxWeight: DefaultMaxWeight}) {
		t.Fatalf("defaults %+v", got)
	}
}
