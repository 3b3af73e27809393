package baseline

import (
	"fmt"
	"hash/fnv"
	"testing"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("router%d", i+1)
	}
	return out
}

func TestScoreIsFNV1aOfNameColonIndex(t *testing.T) {
	h := fnv.New64a()
	h.Write([]byte("ns/router1:7"))
	if got, want := Score("ns/router1", 7), h.Sum64(); got != want {
		t.Errorf("Score = %x, want FNV-1a 64 of \"ns/router1:7\" = %x", got, want)
	}
}

func TestPlaceBoundsEveryPodByCeilOfTargetsOverPods(t *testing.T) {
	got := Place(names(10), 3, 0, nil)
	placed := 0
	for pod, podNames := range got {
		if len(podNames) > 4 {
			t.Errorf("pod %d holds %d targets, capacity is 4", pod, len(podNames))
		}
		placed += len(podNames)
	}
	if placed != 10 {
		t.Errorf("placed %d targets, want 10", placed)
	}
}

func TestPlaceKeepsCurrentTargetsUpToCapacity(t *testing.T) {
	current := Assignment{0: {"router1", "router2", "router3"}, 5: {"router4"}}
	got := Place(names(4), 2, 2, current)
	if len(got[0]) != 2 {
		t.Fatalf("pod 0 holds %v, want 2 of its 3 current targets", got[0])
	}
	for _, name := range got[0] {
		if name == "router4" {
			t.Errorf("pod 0 took router4 while full of its own targets")
		}
	}
	if len(got[1]) != 2 {
		t.Errorf("pod 1 holds %v, want the shed target and the orphan", got[1])
	}
}
