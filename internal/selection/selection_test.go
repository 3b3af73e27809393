package selection

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestResolvePointsAtTheListedObjects(t *testing.T) {
	in := namespace(pipeline("p1", v1alpha1.PipelineSpec{
		TargetRefs: []string{"r2"}, SubscriptionRefs: []string{"state"}, Outputs: outputRefs("file"), Inputs: inputRefs("bus"),
	}))
	sel := Resolve("c1", in)
	if len(sel.Targets) != 1 || sel.Targets[0].Target != &in.Targets[1] {
		t.Fatalf("target r2 does not point at the listed object: %+v", sel.Targets)
	}
	if sel.Subscriptions["state"] != &in.Subscriptions[1] || sel.Outputs["file"] != &in.Outputs[1] || sel.Inputs["bus"].Input != &in.Inputs[0] {
		t.Fatalf("selected objects do not point at the listed ones: %+v", sel)
	}
}

func TestSelectionCountsAndLookups(t *testing.T) {
	sel := Resolve("c1", namespace(
		pipeline("p1", v1alpha1.PipelineSpec{TargetSelectors: match(map[string]string{"dc": "dc1"}), SubscriptionRefs: []string{"counters", "state"}, Outputs: outputRefs("file")}),
		pipeline("p2", v1alpha1.PipelineSpec{TargetRefs: []string{"r4"}, SubscriptionRefs: []string{"state"}, Inputs: inputRefs("bus"), Outputs: outputRefs("kafka")}),
	))
	if got, want := sel.Counts(), (Counts{Pipelines: 2, Targets: 3, Subscriptions: 2, Outputs: 2, Inputs: 1}); got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
	if got, want := sel.TargetNames(), []string{"r1", "r2", "r4"}; !slices.Equal(got, want) {
		t.Errorf("TargetNames() = %v, want %v", got, want)
	}
	for _, name := range []string{"r1", "r2", "r4"} {
		if st, ok := sel.Target(name); !ok || st.Target.Name != name {
			t.Errorf("Target(%q) = %v, %v; want the target", name, st.Target, ok)
		}
	}
	for _, name := range []string{"r0", "r3", "r5", ""} {
		if _, ok := sel.Target(name); ok {
			t.Errorf("Target(%q) found a target that is not selected", name)
		}
	}
}

func BenchmarkResolve(b *testing.B) {
	in := Objects{Subscriptions: []v1alpha1.Subscription{subscription("s", nil)}}
	for i := range 5000 {
		in.Targets = append(in.Targets, target(fmt.Sprintf("r%05d", i), map[string]string{"shard": fmt.Sprint(i % 10)}))
	}
	for i := range 10 {
		in.Pipelines = append(in.Pipelines, pipeline(fmt.Sprintf("p%d", i), v1alpha1.PipelineSpec{
			TargetSelectors: match(map[string]string{"shard": fmt.Sprint(i)}), SubscriptionRefs: []string{"s"},
		}))
	}
	for b.Loop() {
		Resolve("c1", in)
	}
}
