package loadweight

import "time"

// Meter remembers, for one Cluster, the counter samples of its targets and the weight each target holds.
// Its forgetting rule: samples leave with the window, and a target leaves when a Weigh no longer names it
// (its samples, weight and cached rate together).
// A Meter is not safe for concurrent use; a reconciler keeps one per Cluster.
type Meter struct {
	settings Settings
	// series are the samples of each target's counter, by target and pod.
	series map[string]map[string]series
	// held is the weight each target holds, by target.
	held map[string]*held
	// rates caches each target's rate, computed from its series; stale lists the targets whose series
	// changed since (a scrape, or samples leaving the window), whose rate is computed again.
	rates map[string]cachedRate
	stale map[string]bool
}

// cachedRate is a target's rate as of its series' last change.
type cachedRate struct {
	perSecond float64
	measured  bool
}

// held is a target's weight between two Weighs.
type held struct {
	Weight
	// outsideSince is when the target's ratio left its weight's band; zero while it is inside.
	outsideSince time.Time
}

// NewMeter returns a Meter with settings (zero fields: the defaults).
func NewMeter(settings Settings) *Meter {
	return &Meter{
		settings: settings.WithDefaults(),
		series:   map[string]map[string]series{},
		held:     map[string]*held{},
		rates:    map[string]cachedRate{},
		stale:    map[string]bool{},
	}
}

// Settings are the settings the Meter works with, defaults applied.
func (m *Meter) Settings() Settings { return m.settings }

// Retune changes the settings. Samples and held weights stay; a shorter window forgets older samples at
// the next Weigh.
func (m *Meter) Retune(settings Settings) { m.settings = settings.WithDefaults() }
