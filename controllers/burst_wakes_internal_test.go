package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestBurstWakesSpaceAClustersWakesByTheWindow(t *testing.T) {
	b := &burstWakes{}
	a, other := types.NamespacedName{Namespace: "n", Name: "a"}, types.NamespacedName{Namespace: "n", Name: "b"}
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, step := range []struct {
		cluster types.NamespacedName
		at      time.Time
		want    time.Duration
	}{
		{a, ms(0), 0},                         // a quiet Cluster wakes at once
		{a, ms(100), 900 * time.Millisecond},  // within the window: at its end
		{a, ms(500), 500 * time.Millisecond},  // joins the wake already scheduled
		{other, ms(500), 0},                   // each Cluster has its own window
		{a, ms(1000), 0},                      // the scheduled wake is due now
		{a, ms(1200), 800 * time.Millisecond}, // the next window follows the last wake
		{a, ms(3500), 0},                      // quiet for a window: at once again
	} {
		if got := b.delay(step.cluster, step.at); got != step.want {
			t.Errorf("%s at +%v: delay %v, want %v", step.cluster.Name, step.at.Sub(t0), got, step.want)
		}
	}
}
