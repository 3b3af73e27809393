package placement

import (
	"fmt"
	"maps"
	"reflect"
	"testing"
)

func TestLasts(t *testing.T) {
	all := func(int) bool { return true }
	none := func(int) bool { return false }
	cases := []struct {
		name      string
		in        Input
		r         Result
		comesBack func(int) bool
		want      map[string]int
	}{
		{"a target that stays has none",
			Input{Pods: []int{0}, Targets: names("t", 1), Current: map[string]int{"t1": 0}},
			Result{Assignments: map[string]int{"t1": 0}}, all, map[string]int{}},
		{"a target whose pod is not ready remembers it",
			Input{Pods: []int{0}, Targets: names("t", 1), Current: map[string]int{"t1": 1}},
			Result{Assignments: map[string]int{"t1": 0}}, all, map[string]int{"t1": 1}},
		{"a target whose pod was scaled away forgets it",
			Input{Pods: []int{0}, Targets: names("t", 1), Current: map[string]int{"t1": 1}},
			Result{Assignments: map[string]int{"t1": 0}}, none, map[string]int{}},
		{"a target shed by an available pod forgets it",
			Input{Pods: []int{0, 1}, Targets: names("t", 1), Current: map[string]int{"t1": 1}},
			Result{Assignments: map[string]int{"t1": 0}}, all, map[string]int{}},
		{"a target back on its last pod forgets it",
			Input{Pods: []int{0, 1}, Targets: names("t", 1), Current: map[string]int{"t1": 0}, Last: map[string]int{"t1": 1}},
			Result{Assignments: map[string]int{"t1": 1}}, all, map[string]int{}},
		{"a target whose last pod is full forgets it",
			Input{Pods: []int{0, 1}, Targets: names("t", 1), Current: map[string]int{"t1": 0}, Last: map[string]int{"t1": 1}},
			Result{Assignments: map[string]int{"t1": 0}}, all, map[string]int{}},
		{"a target waiting on another pod keeps its last pod",
			Input{Pods: []int{0}, Targets: names("t", 1), Current: map[string]int{"t1": 0}, Last: map[string]int{"t1": 2}},
			Result{Assignments: map[string]int{"t1": 0}}, all, map[string]int{"t1": 2}},
		{"an unassigned target keeps its pod even when no pod comes back",
			Input{Targets: names("t", 2), Current: map[string]int{"t1": 3}, Last: map[string]int{"t2": 4}},
			Result{Assignments: map[string]int{}}, none, map[string]int{"t1": 3, "t2": 4}},
		{"a new target has none",
			Input{Pods: []int{0}, Targets: names("t", 2), Last: map[string]int{"deleted": 1}},
			Result{Assignments: map[string]int{"t1": 0}}, all, map[string]int{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Lasts(c.in, c.r, c.comesBack); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// reconcile places the targets on the pods that are up, as a reconciler does between two looks at its
// pods: what it placed last time is current, and the last pods it recorded are fed back. desired is the
// workload's size.
func reconcile(t *testing.T, in Input, up []int, desired int) Input {
	t.Helper()
	in.Pods = up
	r := place(t, in)
	in.Last = Lasts(in, r, func(o int) bool { return o < desired })
	in.Current = r.Assignments
	return in
}

// TestAFleetRestartedPodByPodEndsWhereItWas: every target ends on the pod it was on before the restart,
// whatever order the pods come back in, with automatic and fixed capacity, weights or not.
func TestAFleetRestartedPodByPodEndsWhereItWas(t *testing.T) {
	orders := map[string][][]int{
		"in ordinal order":    {{0}, {0, 1}, {0, 1, 2}},
		"in reverse order":    {{2}, {1, 2}, {0, 1, 2}},
		"two, then the third": {{0, 2}, {0, 1, 2}},
		"all at once":         {{0, 1, 2}},
		"one, gone, then all": {{1}, {}, {0, 1, 2}},
		"one flapping":        {{0}, {0, 1}, {0}, {0, 1, 2}},
	}
	for _, capacity := range []int{0, 100, 150} {
		for _, weighted := range []bool{false, true} {
			for name, order := range orders {
				t.Run(fmt.Sprintf("capacity %d, weighted %v, %s", capacity, weighted, name), func(t *testing.T) {
					in := Input{PodCapacity: capacity, Targets: names("fleet/t", 300)}
					if weighted {
						for i := range in.Targets {
							in.Targets[i].Weight = 1 + i%2
						}
						if capacity > 0 {
							in.PodCapacity = capacity * 3 / 2
						}
					}
					in = reconcile(t, in, []int{0, 1, 2}, 3)
					before := maps.Clone(in.Current)
					if len(before) != 300 {
						t.Fatalf("%d of 300 targets placed before the restart", len(before))
					}
					in = reconcile(t, in, nil, 0) // replicas: 0
					for _, up := range order {
						in = reconcile(t, in, up, 3)
					}
					in = reconcile(t, in, []int{0, 1, 2}, 3)
					moved := 0
					for name, o := range before {
						if in.Current[name] != o {
							moved++
						}
					}
					if moved != 0 || len(in.Last) != 0 {
						t.Fatalf("%d of 300 targets ended elsewhere than before the restart; %d still wait for their pod", moved, len(in.Last))
					}
				})
			}
		}
	}
}

// TestATargetGoesBackWhenItsPodComesBack: a pod unready past its grace period loses its targets to the
// others, and takes them back when it is ready again; a pod scaled away does not.
func TestATargetGoesBackWhenItsPodComesBack(t *testing.T) {
	in := reconcile(t, Input{Targets: names("fleet/t", 300)}, []int{0, 1, 2}, 3)
	before := maps.Clone(in.Current)
	in = reconcile(t, in, []int{0, 2}, 3)
	if len(in.Last) != 100 {
		t.Fatalf("%d targets remember pod 1, want its 100", len(in.Last))
	}
	in = reconcile(t, in, []int{0, 1, 2}, 3)
	if !reflect.DeepEqual(in.Current, before) {
		t.Fatalf("the fleet did not return to its placement once pod 1 was back")
	}

	in = reconcile(t, in, []int{0, 1}, 2) // scaled down: pod 2 is not coming back
	if len(in.Last) != 0 {
		t.Fatalf("%d targets remember a pod that was scaled away", len(in.Last))
	}
}
