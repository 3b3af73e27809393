package cluster

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestBurstsSpaceAClustersWakesByTheWindow(t *testing.T) {
	w := newWakes()
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
		if got := w.burstDelay(step.cluster, step.at); got != step.want {
			t.Errorf("%s at +%v: delay %v, want %v", step.cluster.Name, step.at.Sub(t0), got, step.want)
		}
	}
}

func TestWakesAskedBeforeTheControllerStartedFallDueOnceItStarts(t *testing.T) {
	w := newWakes()
	due, later := types.NamespacedName{Namespace: "n", Name: "due"}, types.NamespacedName{Namespace: "n", Name: "later"}
	w.at(due, time.Now().Add(time.Hour))
	w.now(due) // the earlier of two wakes counts
	w.at(later, time.Now().Add(time.Hour))
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer queue.ShutDown()
	if err := w.Start(context.Background(), queue); err != nil {
		t.Fatal(err)
	}
	got, _ := queue.Get()
	if got.NamespacedName != due {
		t.Errorf("first wake %v, want %v", got, due)
	}
	queue.Done(got)
	if n := queue.Len(); n != 0 {
		t.Errorf("%d more wakes due now, want none: %v waits an hour", n, later)
	}

	w.now(later) // after the start, straight into the queue
	if got, _ := queue.Get(); got.NamespacedName != later {
		t.Errorf("wake after the start: %v, want %v", got, later)
	}
}
