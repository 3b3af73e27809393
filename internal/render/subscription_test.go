package render

import (
	"errors"
	"reflect"
	"testing"
	"time"

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

func TestSubscriptionWithHistoryIsNeverRendered(t *testing.T) {
	for name, h := range map[string]*v1alpha1.SubscriptionHistory{
		"a snapshot": {Snapshot: &historySnapshot},
		"a range":    {Start: &historySnapshot, End: &historySnapshot},
		"nothing":    {},
	} {
		t.Run("refuses history with "+name, func(t *testing.T) {
			sc, err := renderSubscription(subscription("s", v1alpha1.SubscriptionSpec{Paths: []string{"/a"}, History: h}))
			if !errors.Is(err, ErrHistoryNotSupported) {
				t.Fatalf("renderSubscription = %#v, %v; want ErrHistoryNotSupported", sc, err)
			}
		})
	}
}
