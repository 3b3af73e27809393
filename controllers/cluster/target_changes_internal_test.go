package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Every Target event moves its namespace's count, and only those the predicates let through reach the handler
// behind: a status write is counted (the reconcile's list is stale) and wakes nothing.
func TestTargetChangesCountEveryEventAndWakeByThePredicates(t *testing.T) {
	target := func(ns string, generation int64, labels map[string]string, state string) *operatorv1alpha1.Target {
		return &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t", Generation: generation, Labels: labels},
			Status: operatorv1alpha1.TargetStatus{State: state}}
	}
	var woken []string
	inner := handler.Funcs{
		CreateFunc: func(context.Context, event.CreateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			woken = append(woken, "create")
		},
		UpdateFunc: func(context.Context, event.UpdateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			woken = append(woken, "update")
		},
		DeleteFunc: func(context.Context, event.DeleteEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			woken = append(woken, "delete")
		},
		GenericFunc: func(context.Context, event.GenericEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			woken = append(woken, "generic")
		},
	}
	c := &targetChanges{}
	h := c.counting(inner, []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})})
	ctx := context.Background()
	update := func(old, new client.Object) { h.Update(ctx, event.UpdateEvent{ObjectOld: old, ObjectNew: new}, nil) }

	h.Create(ctx, event.CreateEvent{Object: target("a", 1, nil, "")}, nil)
	update(target("a", 1, nil, ""), target("a", 1, nil, operatorv1alpha1.TargetAssigned))  // status only
	update(target("a", 1, nil, ""), target("a", 2, nil, ""))                               // spec
	update(target("a", 2, nil, ""), target("a", 2, map[string]string{"role": "edge"}, "")) // labels
	h.Delete(ctx, event.DeleteEvent{Object: target("a", 2, nil, "")}, nil)
	h.Generic(ctx, event.GenericEvent{Object: target("b", 1, nil, "")}, nil)

	if got := c.of("a"); got != 5 {
		t.Errorf("namespace a counted %d changes, want 5", got)
	}
	if got := c.of("b"); got != 1 {
		t.Errorf("namespace b counted %d changes, want 1", got)
	}
	if names, _, _ := c.since("a", 0); !slices.Equal(names, []string{"t", "t", "t", "t", "t"}) {
		t.Errorf("namespace a's changes named %v, want its Target's five", names)
	}
	if got := c.of("never"); got != 0 {
		t.Errorf("a namespace without events counted %d changes", got)
	}
	want := []string{"create", "update", "update", "delete", "generic"}
	if len(woken) != len(want) {
		t.Fatalf("woken by %v, want %v (the status-only update wakes nothing)", woken, want)
	}
	for i := range want {
		if woken[i] != want[i] {
			t.Fatalf("woken by %v, want %v", woken, want)
		}
	}
}

// The log names the Targets of every change after the one asked for, with the count they bring the namespace
// to, or says that it no longer names them all.
func TestTargetChangesNameEveryChangeSinceOrNone(t *testing.T) {
	c := &targetChanges{}
	var all []string
	for n := 1; n <= 5*targetChangeLog; n++ {
		name := fmt.Sprintf("t%d", n%300)
		c.note("a", name)
		all = append(all, name)
		if n%37 != 0 && n != 2*targetChangeLog+1 {
			continue
		}
		for _, from := range []int{0, n - 1 - targetChangeLog, n - targetChangeLog, n - 2, n} {
			if from < 0 {
				continue
			}
			names, count, ok := c.since("a", uint64(from))
			if !ok {
				if n-from <= targetChangeLog {
					t.Fatalf("after %d changes: the last %d are not named", n, n-from)
				}
				continue
			}
			if count != uint64(n) || !slices.Equal(names, all[from:]) {
				t.Fatalf("after %d changes, since %d: %d names up to %d, want %d up to %d", n, from, len(names), count, n-from, n)
			}
		}
	}
	if _, _, ok := c.since("a", uint64(5*targetChangeLog+1)); ok {
		t.Fatal("the log names changes that were not made")
	}
	if names, count, ok := c.since("b", 0); !ok || count != 0 || len(names) != 0 {
		t.Fatalf("a namespace without changes: %v up to %d (%v), want none up to 0", names, count, ok)
	}
}
