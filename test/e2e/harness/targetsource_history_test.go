package harness

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

func TestTargetHistoryJudgesRecreatesDeletionsAndSyncs(t *testing.T) {
	at := time.Unix(0, 0)
	h := &TargetHistory{
		targets: []TargetEvent{
			{At: at, Type: watch.Added, Name: "a", UID: "1"},
			{At: at, Type: watch.Added, Name: "b", UID: "2"},
			{At: at, Type: watch.Added, Name: "c", UID: "3"},
			{At: at, Type: watch.Modified, Name: "b", UID: "2", MissingSince: "7"},
			{At: at.Add(time.Second), Type: watch.Deleted, Name: "b", UID: "2", MissingSince: "7"},
			{At: at, Type: watch.Deleted, Name: "c", UID: "3"},
			{At: at, Type: watch.Added, Name: "c", UID: "4"}, // recreated
			{At: at, Type: watch.Added, Name: "d", UID: "5"},
			{At: at, Type: watch.Modified, Name: "d", UID: "5"},
		},
		sources: []SourceEvent{
			{Name: "s", Syncs: 6}, {Name: "s", Syncs: 7}, {Name: "s", Syncs: 7}, {Name: "other", Syncs: 1},
			{Name: "s", Syncs: 8},
		},
	}
	if got := h.Recreated(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("Recreated() = %v, want [c]", got)
	}
	deletions := h.Deletions()
	if len(deletions) != 2 || deletions["b"].MissingSince != "7" || !deletions["b"].At.Equal(at.Add(time.Second)) {
		t.Errorf("Deletions() = %v, want b (missing since 7) and c", deletions)
	}
	live := h.Live()
	if len(live) != 3 || live["a"] != "1" || live["c"] != "4" || live["d"] != "5" {
		t.Errorf("Live() = %v, want a:1 c:4 d:5", live)
	}
	if got := h.SyncsOf("s"); !slices.Equal(got, []int64{6, 7, 8}) {
		t.Errorf("SyncsOf(s) = %v, want [6 7 8]", got)
	}
}
