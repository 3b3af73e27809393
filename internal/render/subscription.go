package render

import (
	"fmt"
	"slices"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// modes maps a Subscription's spec.mode to the collector's mode and
// stream-mode. The empty mode is left to the collector, which streams with
// the target-defined stream mode.
var modes = map[string][2]string{
	"":                      {"", ""},
	"ONCE":                  {gnmic.ModeOnce, ""},
	"POLL":                  {gnmic.ModePoll, ""},
	"STREAM":                {gnmic.ModeStream, ""},
	"STREAM/SAMPLE":         {gnmic.ModeStream, gnmic.StreamModeSample},
	"STREAM/ON_CHANGE":      {gnmic.ModeStream, gnmic.StreamModeOnChange},
	"STREAM/TARGET_DEFINED": {gnmic.ModeStream, gnmic.StreamModeTargetDefined},
}

// streamModes maps a stream member's spec.streamMode to the collector's.
var streamModes = map[string]string{
	"":               "",
	"SAMPLE":         gnmic.StreamModeSample,
	"ON_CHANGE":      gnmic.StreamModeOnChange,
	"TARGET_DEFINED": gnmic.StreamModeTargetDefined,
}

// renderSubscription returns the collector's view of s. A subscription with
// history is an error, never sent: the collector cannot decode history and
// would refuse every other object of the apply with it.
func renderSubscription(s *v1alpha1.Subscription) (gnmic.SubscriptionConfig, error) {
	spec := s.Spec
	if spec.History != nil {
		return gnmic.SubscriptionConfig{}, ErrHistoryNotSupported
	}
	mode, ok := modes[spec.Mode]
	if !ok {
		return gnmic.SubscriptionConfig{}, fmt.Errorf("spec.mode %q: %w", spec.Mode, ErrUnknownMode)
	}
	sc := gnmic.SubscriptionConfig{
		Name:              s.Name,
		Prefix:            spec.Prefix,
		Target:            spec.Target,
		Paths:             slices.Clone(spec.Paths),
		Mode:              mode[0],
		StreamMode:        mode[1],
		Encoding:          spec.Encoding,
		SampleInterval:    duration(spec.SampleInterval),
		HeartbeatInterval: duration(spec.HeartbeatInterval),
		SuppressRedundant: spec.SuppressRedundant,
		UpdatesOnly:       spec.UpdatesOnly,
	}
	if spec.Qos != nil && *spec.Qos >= 0 {
		qos := uint32(*spec.Qos)
		sc.Qos = &qos
	}
	if spec.Depth > 0 {
		sc.Depth = uint32(spec.Depth)
	}
	for i, member := range spec.StreamSubscriptions {
		streamMode, ok := streamModes[member.StreamMode]
		if !ok {
			return gnmic.SubscriptionConfig{}, fmt.Errorf("spec.streamSubscriptions[%d].streamMode %q: %w", i, member.StreamMode, ErrUnknownMode)
		}
		sc.StreamSubscriptions = append(sc.StreamSubscriptions, gnmic.SubscriptionConfig{
			Paths:             slices.Clone(member.Paths),
			StreamMode:        streamMode,
			SampleInterval:    duration(member.SampleInterval),
			HeartbeatInterval: duration(member.HeartbeatInterval),
		})
	}
	return sc, nil
}
