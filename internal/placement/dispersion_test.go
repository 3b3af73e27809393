package placement

import (
	"fmt"
	"testing"
)

// TestPlaceSpreadsTargetsEvenlyWhenCapacityDoesNotBind measures the score
// alone: with room everywhere every target lands on its favourite pod.
func TestPlaceSpreadsTargetsEvenlyWhenCapacityDoesNotBind(t *testing.T) {
	targets := make([]Target, 10_000)
	for i := range targets {
		targets[i] = Target{Name: fmt.Sprintf("ns-%d/router-%05d", i%7, i)}
	}
	for _, pods := range []int{3, 5, 10, 12} {
		t.Run(fmt.Sprintf("%d pods", pods), func(t *testing.T) {
			r := Place(Input{Pods: ordinals(pods), PodCapacity: len(targets), Targets: targets})
			if len(r.Unassigned) != 0 {
				t.Fatalf("%d unassigned", len(r.Unassigned))
			}
			heaviest := 0
			for _, l := range r.Load {
				heaviest = max(heaviest, l)
			}
			mean := float64(len(targets)) / float64(pods)
			ratio := float64(heaviest) / mean
			t.Logf("max/mean %.3f (max %d, mean %.1f)", ratio, heaviest, mean)
			if ratio > 1.10 {
				t.Errorf("max/mean %.3f above 1.10", ratio)
			}
		})
	}
}
