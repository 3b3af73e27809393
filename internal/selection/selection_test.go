package selection

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// BenchmarkResolve selects 50,000 Targets with 5 Pipelines of label
// selectors, from scratch (Resolve) and as a caller that keeps its Prepared
// and picks does on a steady namespace. Besides wall time it reports the
// process's CPU time per operation (cpu-ns/op, garbage collection included),
// which a busy machine distorts less.
func BenchmarkResolve(b *testing.B) {
	in := Objects{Subscriptions: []v1alpha1.Subscription{subscription("s", nil)}}
	for i := range 50000 {
		in.Targets = append(in.Targets, target(fmt.Sprintf("r%05d", i), map[string]string{"shard": fmt.Sprint(i % 10)}))
	}
	for i := range 5 {
		in.Pipelines = append(in.Pipelines, pipeline(fmt.Sprintf("p%d", i), v1alpha1.PipelineSpec{
			TargetSelectors:  []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "shard", Operator: metav1.LabelSelectorOpIn, Values: []string{fmt.Sprint(2 * i), fmt.Sprint(2*i + 1)}}}}},
			SubscriptionRefs: []string{"s"},
			Labels:           map[string]string{"pipeline": fmt.Sprint(i)},
		}))
	}
	b.Run("from scratch before the split", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			referenceResolve("c1", in)
		}
	})
	b.Run("from scratch", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			Resolve("c1", in)
		}
	})
	b.Run("picks with a kept Prepared", func(b *testing.B) {
		p := Prepare("c1", in)
		defer reportCPU(b)()
		for b.Loop() {
			for i := range in.Targets {
				p.Target(&in.Targets[i])
			}
		}
	})
	b.Run("assembled from reused picks", func(b *testing.B) {
		p := Prepare("c1", in)
		picks := make([]TargetPick, len(in.Targets))
		for i := range in.Targets {
			picks[i] = p.Target(&in.Targets[i])
		}
		defer reportCPU(b)()
		for b.Loop() {
			p.Selection(func(yield func(*v1alpha1.Target, *TargetPick) bool) {
				for i := range in.Targets {
					if !yield(&in.Targets[i], &picks[i]) {
						return
					}
				}
			})
		}
	})
	b.Run("steady caller", func(b *testing.B) {
		caller := &incrementalCaller{}
		caller.selection("c1", in)
		defer reportCPU(b)()
		for b.Loop() {
			caller.selection("c1", in)
		}
	})
}

// reportCPU returns a function that reports the CPU time the process spent
// per operation since reportCPU was called.
func reportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() { b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op") }
}

func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
