package gnmic_test

import (
	"slices"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

func TestParseReleaseReadsTagsAndRefusesTheRest(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want gnmic.Release
		ok   bool
	}{
		{"0.47.0", gnmic.Release{Minor: 47}, true},
		{"v0.43.1", gnmic.Release{Minor: 43, Patch: 1}, true},
		{"1.2.3", gnmic.Release{Major: 1, Minor: 2, Patch: 3}, true},
		{"0.47", gnmic.Release{}, false},
		{"latest", gnmic.Release{}, false},
		{"0.47.0-scratch", gnmic.Release{}, false},
		{"0.-1.0", gnmic.Release{}, false},
	} {
		got, err := gnmic.ParseRelease(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseRelease(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestReleasesCompareByNumberNotByText(t *testing.T) {
	r := func(s string) gnmic.Release {
		v, err := gnmic.ParseRelease(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if !r("0.9.0").Before(r("0.10.0")) || r("0.10.0").Before(r("0.9.0")) {
		t.Error("0.9.0 must be before 0.10.0")
	}
	if r("0.47.0").Compare(r("0.47.0")) != 0 || r("1.0.0").Compare(r("0.99.9")) != 1 {
		t.Error("Compare is wrong")
	}
}

func TestFeaturesNeedTheReleasesTheirSourceHistorySays(t *testing.T) {
	want := map[gnmic.Feature]string{
		gnmic.FeatureConfigApply:         "0.43.0",
		gnmic.FeatureResponseCounters:    "0.43.0",
		gnmic.FeatureGNMIServer:          "0.43.0",
		gnmic.FeatureStateStreams:        "0.44.0",
		gnmic.FeatureTunnelTargetMatches: "0.47.0",
	}
	if len(gnmic.Features) != len(want) {
		t.Fatalf("%d features, want %d", len(gnmic.Features), len(want))
	}
	for i, fr := range gnmic.Features {
		if fr.Since.String() != want[fr.Feature] {
			t.Errorf("%s since %s, want %s", fr.Feature, fr.Since, want[fr.Feature])
		}
		if fr.Uses == "" || fr.OnOlder == "" {
			t.Errorf("%s: say what uses it and what happens on an older collector", fr.Feature)
		}
		if i > 0 && fr.Since.Before(gnmic.Features[i-1].Since) {
			t.Errorf("Features must be oldest first: %s before %s", gnmic.Features[i-1].Feature, fr.Feature)
		}
	}
	if gnmic.MinimumRelease.String() != "0.47.0" {
		t.Errorf("MinimumRelease = %s, want 0.47.0", gnmic.MinimumRelease)
	}
	def, ok := gnmic.ImageRelease(gnmic.DefaultImage)
	if !ok || def.Before(gnmic.MinimumRelease) {
		t.Errorf("DefaultImage %s names %v (%v), older than the minimum %s", gnmic.DefaultImage, def, ok, gnmic.MinimumRelease)
	}
}

func TestLackingListsWhatEachReleaseClassHasNot(t *testing.T) {
	for _, tt := range []struct {
		release string
		want    []gnmic.Feature
	}{
		{"0.42.0", []gnmic.Feature{gnmic.FeatureConfigApply, gnmic.FeatureResponseCounters, gnmic.FeatureGNMIServer,
			gnmic.FeatureStateStreams, gnmic.FeatureTunnelTargetMatches}},
		{"0.43.0", []gnmic.Feature{gnmic.FeatureStateStreams, gnmic.FeatureTunnelTargetMatches}},
		{"0.46.0", []gnmic.Feature{gnmic.FeatureTunnelTargetMatches}},
		{"0.47.0", nil},
		{"1.0.0", nil},
	} {
		r, _ := gnmic.ParseRelease(tt.release)
		if got := gnmic.Lacking(r); !slices.Equal(got, tt.want) {
			t.Errorf("Lacking(%s) = %v, want %v", tt.release, got, tt.want)
		}
	}
}

func TestImageReleaseReadsOnlyGNMIcReleaseTags(t *testing.T) {
	for _, tt := range []struct {
		image, want string
		ok          bool
	}{
		{"ghcr.io/openconfig/gnmic:0.47.0", "0.47.0", true},
		{"ghcr.io/openconfig/gnmic:0.47.0-scratch", "0.47.0", true},
		{"ghcr.io/openconfig/gnmic:latest", "", false},
		{"registry.example/gnmic:0.42.0", "", false},
		{"ghcr.io/openconfig/gnmic", "", false},
	} {
		r, ok := gnmic.ImageRelease(tt.image)
		if ok != tt.ok || (ok && r.String() != tt.want) {
			t.Errorf("ImageRelease(%q) = %v, %v; want %s, %v", tt.image, r, ok, tt.want, tt.ok)
		}
	}
}

func TestAPILevelSaysWhichReleasesAnswerSo(t *testing.T) {
	for _, tt := range []struct{ answersAs, releases string }{
		{"0.42.0", "0.42.x or older"}, {"0.43.0", "0.43.x"}, {"0.44.0", "0.44.0 to 0.46.x"}, {"0.47.0", "0.47.0 or newer"},
	} {
		r, _ := gnmic.ParseRelease(tt.answersAs)
		if got := (gnmic.APILevel{AnswersAs: r}).Releases(); got != tt.releases {
			t.Errorf("answering as %s: Releases() = %q, want %q", tt.answersAs, got, tt.releases)
		}
	}
	if l := gnmic.TooOldForApply("POST /api/v1/config/apply answered 404"); l.Has(gnmic.FeatureConfigApply) {
		t.Error("a collector whose apply has no route has config apply")
	}
}
