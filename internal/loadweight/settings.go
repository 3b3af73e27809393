package loadweight

import (
	"fmt"
	"time"
)

// Defaults of Settings.
const (
	// DefaultWindow averages over five collector polls of the operator's default poll interval (60 s).
	DefaultWindow = 5 * time.Minute
	// DefaultHysteresis is how long a rate must stay outside its weight's band before the weight follows.
	DefaultHysteresis = 10 * time.Minute
	// DefaultMaxWeight caps a measured weight: a target 64 times as busy as the typical one.
	DefaultMaxWeight = 64
)

// Settings tune a Meter. Zero values mean the defaults.
type Settings struct {
	// Window is how far back rates are averaged. A target is measured once its samples span half of it.
	Window time.Duration
	// Hysteresis is how long a target's ratio must stay outside its weight's band before the weight changes.
	Hysteresis time.Duration
	// MaxWeight caps measured weights.
	MaxWeight int
}

// WithDefaults fills the zero fields with the defaults.
func (s Settings) WithDefaults() Settings {
	if s.Window == 0 {
		s.Window = DefaultWindow
	}
	if s.Hysteresis == 0 {
		s.Hysteresis = DefaultHysteresis
	}
	if s.MaxWeight == 0 {
		s.MaxWeight = DefaultMaxWeight
	}
	return s
}

// Validate says what is wrong with the settings, nil when nothing is.
func (s Settings) Validate() error {
	if s.Window < 0 {
		return fmt.Errorf("window %s: must not be negative", s.Window)
	}
	if s.Hysteresis < 0 {
		return fmt.Errorf("hysteresis %s: must not be negative", s.Hysteresis)
	}
	if s.MaxWeight < 0 {
		return fmt.Errorf("max weight %d: must not be negative", s.MaxWeight)
	}
	return nil
}
