package render

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

func TestSubscriptionModes(t *testing.T) {
	tests := []struct {
		mode, wantMode, wantStreamMode string
	}{
		{"", "", ""},
		{"ONCE", "once", ""},
		{"POLL", "poll", ""},
		{"STREAM", "stream", ""},
		{"STREAM/SAMPLE", "stream", "sample"},
		{"STREAM/ON_CHANGE", "stream", "on-change"},
		{"STREAM/TARGET_DEFINED", "stream", "target-defined"},
	}
	for _, tt := range tests {
		t.Run("maps mode "+tt.mode+" to the collector's mode and stream-mode", func(t *testing.T) {
			sc, err := renderSubscription(subscription("s", v1alpha1.SubscriptionSpec{Paths: []string{"/a"}, Mode: tt.mode}))
			if err != nil {
				t.Fatal(err)
			}
			if sc.Mode != tt.wantMode || sc.StreamMode != tt.wantStreamMode {
				t.Fatalf("mode %q renders as %q/%q, want %q/%q", tt.mode, sc.Mode, sc.StreamMode, tt.wantMode, tt.wantStreamMode)
			}
		})
	}
}

func TestSubscriptionFields(t *testing.T) {
	snapshot := metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600)))
	start, end := metav1.NewTime(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), metav1.NewTime(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name string
		spec v1alpha1.SubscriptionSpec
		want gnmic.SubscriptionConfig
	}{
		{
			name: "sends paths, prefix, target, encoding, qos, depth, flags and intervals as duration strings",
			spec: v1alpha1.SubscriptionSpec{
				Paths: []string{"/interfaces", "/bgp"}, Prefix: "/state", Target: "vrf1", Mode: "STREAM/SAMPLE",
				SampleInterval: dur(10 * time.Second), HeartbeatInterval: dur(2 * time.Minute), Encoding: "PROTO",
				UpdatesOnly: true, SuppressRedundant: true, Qos: ptr(int32(46)), Depth: 3,
			},
			want: gnmic.SubscriptionConfig{
				Name: "s", Paths: []string{"/interfaces", "/bgp"}, Prefix: "/state", Target: "vrf1",
				Mode: "stream", StreamMode: "sample", SampleInterval: "10s", HeartbeatInterval: "2m0s", Encoding: "PROTO",
				UpdatesOnly: true, SuppressRedundant: true, Qos: ptr(uint32(46)), Depth: 3,
			},
		},
		{
			name: "sends qos 0 when it is set to 0",
			spec: v1alpha1.SubscriptionSpec{Paths: []string{"/a"}, Qos: ptr(int32(0))},
			want: gnmic.SubscriptionConfig{Name: "s", Paths: []string{"/a"}, Qos: ptr(uint32(0))},
		},
		{
			name: "leaves out a zero sample interval so the device picks its own",
			spec: v1alpha1.SubscriptionSpec{Paths: []string{"/a"}, SampleInterval: dur(0)},
			want: gnmic.SubscriptionConfig{Name: "s", Paths: []string{"/a"}},
		},
		{
			name: "sends stream subscriptions with their own modes and intervals",
			spec: v1alpha1.SubscriptionSpec{Mode: "STREAM", StreamSubscriptions: []v1alpha1.StreamSubscription{
				{Paths: []string{"/counters"}, StreamMode: "SAMPLE", SampleInterval: dur(30 * time.Second)},
				{Paths: []string{"/oper-status"}, StreamMode: "ON_CHANGE", HeartbeatInterval: dur(time.Minute)},
				{Paths: []string{"/other"}, StreamMode: "TARGET_DEFINED"},
			}},
			want: gnmic.SubscriptionConfig{Name: "s", Mode: "stream", StreamSubscriptions: []gnmic.SubscriptionConfig{
				{Paths: []string{"/counters"}, StreamMode: "sample", SampleInterval: "30s"},
				{Paths: []string{"/oper-status"}, StreamMode: "on-change", HeartbeatInterval: "1m0s"},
				{Paths: []string{"/other"}, StreamMode: "target-defined"},
			}},
		},
		{
			name: "sends a history snapshot in RFC 3339 UTC",
			spec: v1alpha1.SubscriptionSpec{Paths: []string{"/a"}, History: &v1alpha1.SubscriptionHistory{Snapshot: &snapshot}},
			want: gnmic.SubscriptionConfig{Name: "s", Paths: []string{"/a"}, History: &gnmic.HistoryConfig{Snapshot: "2026-03-01T11:00:00Z"}},
		},
		{
			name: "sends a history range",
			spec: v1alpha1.SubscriptionSpec{Paths: []string{"/a"}, History: &v1alpha1.SubscriptionHistory{Start: &start, End: &end}},
			want: gnmic.SubscriptionConfig{Name: "s", Paths: []string{"/a"}, History: &gnmic.HistoryConfig{Start: "2026-03-01T00:00:00Z", End: "2026-03-02T00:00:00Z"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			f.subscriptions["s"] = subscription("s", tt.spec)
			f.picks["r1"] = selectionTarget([]string{"s"}, nil)
			cfg, skips, err := f.render("r1")
			if err != nil || len(skips) > 0 {
				t.Fatalf("PodConfig: skips %v, error %v", skips, err)
			}
			if got := cfg.Subscriptions["s"]; !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("subscription s:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestUnknownStreamModeIsAnError(t *testing.T) {
	_, err := renderSubscription(subscription("s", v1alpha1.SubscriptionSpec{StreamSubscriptions: []v1alpha1.StreamSubscription{
		{Paths: []string{"/a"}, StreamMode: "SOMETIMES"},
	}}))
	if err == nil || err.Error() != `spec.streamSubscriptions[0].streamMode "SOMETIMES": unknown mode` {
		t.Fatalf("err = %v, want the unknown stream mode named", err)
	}
}
