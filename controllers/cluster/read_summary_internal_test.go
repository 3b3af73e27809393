package cluster

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/handover"
)

// TestReadSummariesGiveWhatEveryNameGives: counting a pod's running and pending targets, and telling whether any
// target sent is still on its way, give from a read's summary (NewRuntime) what they give name by name, over
// random pods: at rest (the lists equal, where the summary answers), and not.
func TestReadSummariesGiveWhatEveryNameGives(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	states := []string{gnmic.StateRunning, gnmic.StateRunning, gnmic.StateRunning, gnmic.StateStarting, "", gnmic.StateFailed}
	atRest := 0
	for round := range 2000 {
		var onPod []string
		for i := range 8 {
			if rng.Intn(4) > 0 {
				onPod = append(onPod, fmt.Sprintf("r%d", i))
			}
		}
		targets := map[string]gnmic.TargetStatus{}
		for _, n := range onPod {
			if rng.Intn(8) > 0 {
				targets[n] = gnmic.TargetStatus{State: states[rng.Intn(len(states))]}
			}
		}
		if rng.Intn(6) == 0 {
			targets["stray"] = gnmic.TargetStatus{State: gnmic.StateRunning}
		}
		rt := collector.NewRuntime(targets, nil)
		if rng.Intn(8) == 0 {
			rt = collector.Runtime{}
		}
		send := slices.Clone(onPod)
		if rng.Intn(3) == 0 && len(send) > 0 {
			send = send[1:]
		}
		if slices.Equal(onPod, rt.Names()) {
			atRest++
		}

		running, pending := runningAndPending(onPod, rt)
		var wantRunning, wantPending int32
		for _, n := range onPod {
			if _, ok := rt.Targets[n]; ok && rt.Known {
				wantRunning++
			} else {
				wantPending++
			}
		}
		if running != wantRunning || pending != wantPending {
			t.Fatalf("round %d: onPod %v, read %v: running %d pending %d, name by name %d and %d", round, onPod,
				rt.Targets, running, pending, wantRunning, wantPending)
		}

		pushed := pushResults{pods: map[int]*podPush{0: {considered: true, step: handover.Step{Ordinal: 0, Send: send}}}}
		runtimes := collectorRuntimes{0: rt}
		want := false
		for _, n := range send {
			st, ok := runtimes.runs(0, n)
			if !ok || st.State == gnmic.StateStarting || st.State == "" {
				want = true
			}
		}
		if got := anyStarting(runtimes, pushed); got != want {
			t.Fatalf("round %d: sent %v, read %v: anyStarting %v, name by name %v", round, send, rt.Targets, got, want)
		}
	}
	if atRest < 200 {
		t.Fatalf("only %d pods at rest: the rounds did not test the summaries", atRest)
	}
}

// withFailed gives restartFailedTargets every target it may act on, each once: the failed ones, and those with a
// restart on record (to forget once they run).
func TestWithFailedIsTheFailedAndTheTrackedOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failed  []string
		tracked []string
		want    []string
	}{
		{name: "nothing on record", failed: []string{"a", "c"}, want: []string{"a", "c"}},
		{name: "none failed", tracked: []string{"b"}, want: []string{"b"}},
		{name: "both, one in each", failed: []string{"a", "c"}, tracked: []string{"b", "c", "z"}, want: []string{"a", "b", "c", "z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b restartBackoff
			for _, name := range tc.tracked {
				b.attempted(name, time.Now())
			}
			got := b.withFailed(tc.failed)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("withFailed(%v) with %v on record = %v, want %v", tc.failed, tc.tracked, got, tc.want)
			}
		})
	}
}
