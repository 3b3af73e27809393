package gnmic

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Release is a gNMIc release, such as 0.47.0.
type Release struct {
	Major, Minor, Patch int
}

// ParseRelease reads "0.47.0" or "v0.47.0".
func ParseRelease(s string) (Release, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) != 3 {
		return Release{}, fmt.Errorf("gNMIc release %q: want MAJOR.MINOR.PATCH", s)
	}
	var r [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Release{}, fmt.Errorf("gNMIc release %q: want MAJOR.MINOR.PATCH", s)
		}
		r[i] = n
	}
	return Release{Major: r[0], Minor: r[1], Patch: r[2]}, nil
}

func mustRelease(s string) Release {
	r, err := ParseRelease(s)
	if err != nil {
		panic(err)
	}
	return r
}

func (r Release) String() string { return fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch) }

// Before tells whether r is older than o.
func (r Release) Before(o Release) bool {
	return r.Compare(o) < 0
}

// Compare orders releases: -1 when r is older than o, 0 when equal, 1 when newer.
func (r Release) Compare(o Release) int {
	for _, d := range [][2]int{{r.Major, o.Major}, {r.Minor, o.Minor}, {r.Patch, o.Patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Feature is a part of the collector's API the operator relies on.
type Feature string

// The features of the collector the operator uses. Each one's first release is read from gNMIc's source
// history (docs/collectors.md has the table and what happens on an older image).
const (
	// FeatureConfigApply is the collect command and POST /api/v1/config/apply, how every pod receives its
	// configuration. Both arrived in v0.43.0 (pkg/collector/api/server/routes.go): v0.42.0 has no collect
	// command at all (pkg/cmd/root.go), so its container exits at once.
	FeatureConfigApply Feature = "config apply"
	// FeatureStateStreams is GET /api/v1/sse/{kind}?store=state: the target, output and input state events,
	// first in v0.44.0. Without it targets are read only at every poll, and the outputs' and inputs' state is
	// never known.
	FeatureStateStreams Feature = "state streams"
	// FeatureResponseCounters is gnmic_targets_subscribe_response_received_count per target and subscription
	// on the collect command's /metrics (pkg/collector/managers/targets/metrics.go, v0.43.0), which weighBy
	// Measured reads.
	FeatureResponseCounters Feature = "per-target response counters"
	// FeatureGNMIServer is the collect command's gnmi-server section (v0.43.0), spec.gnmiServer.
	FeatureGNMIServer Feature = "gNMI server"
	// FeatureTunnelTargetMatches is tunnel-target-matches that match: added in v0.43.0, but no device matched
	// any rule before v0.47.0 (gNMIc commit 8bca0432, issue #884), so every dial-in device was ignored.
	FeatureTunnelTargetMatches Feature = "tunnel-target-matches"
)

// FeatureRelease is a feature, the first gNMIc release that has it, and what the operator does on an older one.
type FeatureRelease struct {
	Feature Feature
	Since   Release
	// Uses says what of the operator needs the feature; OnOlder what happens on an older collector.
	Uses, OnOlder string
}

// Features is every collector feature the operator uses, oldest first: the one place that says which gNMIc
// each part of the operator needs.
var Features = []FeatureRelease{
	{FeatureConfigApply, mustRelease("0.43.0"), "every Cluster: each pod's configuration",
		"the collector container exits (unknown command \"collect\"); nothing is pushed and the Cluster's " +
			"CollectorsSupported condition is False (reason CollectorTooOld)"},
	{FeatureResponseCounters, mustRelease("0.43.0"), "Clusters with spec.targetDistribution.weighBy: Measured",
		"as config apply: no collector of an older release runs"},
	{FeatureGNMIServer, mustRelease("0.43.0"), "Clusters with spec.gnmiServer",
		"as config apply: no collector of an older release runs"},
	{FeatureStateStreams, mustRelease("0.44.0"), "every Cluster: target changes within moments, the outputs' and inputs' state",
		"targets are read at every poll only; Outputs and Inputs are Running False (reason CollectorTooOld); " +
			"CollectorsSupported is False"},
	{FeatureTunnelTargetMatches, mustRelease("0.47.0"), "Clusters with spec.grpcTunnel and their TunnelTargetPolicies",
		"every device that dials in is ignored by the collector; the TunnelTargetPolicy is Running False " +
			"(reason CollectorTooOld) and CollectorsSupported is False"},
}

// FeatureSince is the first gNMIc release that has f.
func FeatureSince(f Feature) Release {
	for _, fr := range Features {
		if fr.Feature == f {
			return fr.Since
		}
	}
	panic(fmt.Sprintf("gnmic: unknown feature %q", f))
}

// OutputTypes are the output types the operator accepts (Output spec.type), each with the first gNMIc release
// that registers it (pkg/outputs/all/all.go at each tag). asciigraph, a graph drawn on a terminal, is left out:
// a collector pod has none.
var OutputTypes = map[string]Release{
	"file": mustRelease("0.42.0"), "kafka": mustRelease("0.42.0"), "nats": mustRelease("0.42.0"),
	"jetstream": mustRelease("0.42.0"), "influxdb": mustRelease("0.42.0"), "prometheus": mustRelease("0.42.0"),
	"prometheus_write": mustRelease("0.42.0"), "tcp": mustRelease("0.42.0"), "udp": mustRelease("0.42.0"),
	"gnmi": mustRelease("0.42.0"), "snmp": mustRelease("0.42.0"), "otlp": mustRelease("0.43.0"),
	"clickhouse": mustRelease("0.47.0"),
}

// InputTypes are the input types the operator accepts (Input spec.type), each with its first release.
var InputTypes = map[string]Release{
	"kafka": mustRelease("0.42.0"), "nats": mustRelease("0.42.0"), "jetstream": mustRelease("0.42.0"),
}

// MinimumRelease is the oldest gNMIc release that has every feature the operator uses.
var MinimumRelease = func() Release {
	var newest Release
	for _, fr := range Features {
		if newest.Before(fr.Since) {
			newest = fr.Since
		}
	}
	for _, since := range OutputTypes {
		if newest.Before(since) {
			newest = since
		}
	}
	return newest
}()

// ImageRepository is where gNMIc's release images are published; DefaultImage is the collector image that
// samples, docs and the test harness name: a release with every feature the operator uses.
const (
	ImageRepository = "ghcr.io/openconfig/gnmic"
	DefaultRelease  = "0.47.0"
	DefaultImage    = ImageRepository + ":" + DefaultRelease
)

// ImageRelease is the gNMIc release an image of ImageRepository names by its tag ("…/gnmic:0.47.0",
// "…:0.47.0-scratch"), false for any other image or tag. It is for documentation checks and messages only:
// what a collector supports is learnt from how it answers (Answers), never from its image.
func ImageRelease(image string) (Release, bool) {
	repo, tag, ok := strings.Cut(image, ":")
	if !ok || repo != ImageRepository {
		return Release{}, false
	}
	tag, _, _ = strings.Cut(tag, "-")
	r, err := ParseRelease(tag)
	return r, err == nil
}

// Lacking are the features a collector that answers as release r does not have, in the order of Features.
func Lacking(r Release) []Feature {
	var out []Feature
	for _, fr := range Features {
		if r.Before(fr.Since) {
			out = append(out, fr.Feature)
		}
	}
	return out
}

// Has tells whether a collector that answers as r does has f.
func Has(r Release, f Feature) bool {
	return !slices.Contains(Lacking(r), f)
}
