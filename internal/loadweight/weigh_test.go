package loadweight

import (
	"math"
	"testing"
	"time"
)

func TestATargetNotYetMeasuredWeighsItsDeclaredWeight(t *testing.T) {
	m := NewMeter(Settings{})
	m.Observe("p0", t0, map[string]float64{"a": 10})
	got := m.Weigh(t0, []Target{{Name: "a", Declared: 4}, {Name: "b"}})
	want := map[string]Weight{"a": {Value: 4, Source: Declared}, "b": {Value: 1, Source: Declared}}
	for name, w := range want {
		if got.ByTarget[name] != w {
			t.Errorf("%s weighs %+v, want %+v", name, got.ByTarget[name], w)
		}
	}
}

func TestAMeterStartsFromTheReportedWeightAfterARestart(t *testing.T) {
	m := NewMeter(Settings{})
	got := m.Weigh(t0, []Target{
		{Name: "measured", Declared: 1, Reported: Weight{Value: 8, Source: Measured, Rate: 80}},
		{Name: "redeclared", Declared: 2, Reported: Weight{Value: 4, Source: Declared}},
	})
	if w := got.ByTarget["measured"]; w.Value != 8 || w.Source != Measured {
		t.Errorf("measured weighs %+v, want the reported 8", w)
	}
	if w := got.ByTarget["redeclared"]; w.Value != 2 || w.Source != Declared {
		t.Errorf("redeclared weighs %+v, want its declaration now, 2", w)
	}
}

// steady feeds the meter a fleet at constant rates for d, one scrape a minute.
func steady(f *fleet, d time.Duration) Weights {
	var w Weights
	for end := f.now.Add(d); f.now.Before(end); {
		w = f.step()
	}
	return w
}

func TestWeightsAreRatiosToTheMedianRateRoundedToPowersOfTwoAfterTheHysteresis(t *testing.T) {
	rates := map[string]float64{"t0000": 1, "t0001": 2, "t0002": 2, "t0003": 2, "t0004": 20, "t0005": 500, "t0006": 0}
	f := newFleet(Settings{Window: 5 * time.Minute, Hysteresis: 10 * time.Minute}, 7, 2,
		func(name string, _ time.Time) float64 { return rates[name] })

	early := steady(f, 5*time.Minute)
	if w := early.ByTarget["t0004"]; w.Value != 1 || w.Source != Declared || math.Abs(w.Rate-20) > 1e-9 {
		t.Fatalf("t0004 at 5 min weighs %+v, want its declared 1, measured at 20/s, until the hysteresis passed", w)
	}
	got := steady(f, 11*time.Minute)
	if got.Typical != 2 {
		t.Fatalf("typical rate %v, want the median of the measured rates, 2 (silent targets are not measured)", got.Typical)
	}
	want := map[string]Weight{
		"t0000": {Value: 1, Source: Measured, Rate: 1}, "t0001": {Value: 1, Source: Measured, Rate: 2},
		"t0004": {Value: 8, Source: Measured, Rate: 20}, "t0005": {Value: 64, Source: Measured, Rate: 500},
		"t0006": {Value: 1, Source: Declared},
	}
	for name, w := range want {
		g := got.ByTarget[name]
		if g.Value != w.Value || g.Source != w.Source || math.Abs(g.Rate-w.Rate) > 1e-9 {
			t.Errorf("%s weighs %+v, want %+v", name, g, w)
		}
	}
}

func TestAWeightHoldsWhileTheRateLeavesItsBandForLessThanTheHysteresis(t *testing.T) {
	burst := false
	f := newFleet(Settings{Window: 2 * time.Minute, Hysteresis: 10 * time.Minute}, 5, 1,
		func(name string, _ time.Time) float64 {
			if name == "t0000" && burst {
				return 50
			}
			return 5
		})
	steady(f, 10*time.Minute)
	burst = true
	if w := steady(f, 9*time.Minute).ByTarget["t0000"]; w.Value != 1 {
		t.Fatalf("after a 9-minute burst t0000 weighs %+v, want 1", w)
	}
	burst = false
	steady(f, 3*time.Minute)
	burst = true
	if w := steady(f, 9*time.Minute).ByTarget["t0000"]; w.Value != 1 {
		t.Fatalf("after another 9-minute burst t0000 weighs %+v, want 1: the hysteresis clock restarts", w)
	}
	var changed []Change
	for end := f.now.Add(2 * time.Minute); f.now.Before(end); {
		changed = append(changed, f.step().Changed...)
	}
	if w := f.step().ByTarget["t0000"]; w.Value != 8 {
		t.Fatalf("after 11 minutes at 10x t0000 weighs %+v, want 8", w)
	}
	if len(changed) != 1 || changed[0].Target != "t0000" || changed[0].From != 1 || changed[0].To != 8 ||
		math.Abs(changed[0].Rate-50) > 1e-9 {
		t.Fatalf("changes %+v, want t0000 1 -> 8 at 50/s, once", changed)
	}
}

func TestAMeterForgetsTargetsNoLongerNamed(t *testing.T) {
	m := NewMeter(Settings{})
	m.Observe("p0", t0, map[string]float64{"a": 1, "b": 1})
	m.Weigh(t0, []Target{{Name: "a"}, {Name: "b"}})
	m.Weigh(t0, []Target{{Name: "a"}})
	if _, ok := m.series["b"]; ok {
		t.Error("b's samples outlived it")
	}
	if _, ok := m.held["b"]; ok {
		t.Error("b's weight outlived it")
	}
}
