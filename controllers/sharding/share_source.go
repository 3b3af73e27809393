package sharding

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Watch is one of the Cluster reconciler's watches of a kind the share holds.
type Watch struct {
	Object     client.Object
	Handler    handler.EventHandler
	Predicates []predicate.Predicate
}

// shareSource feeds the controller the events of every cache of the share, present and future. A new cache's
// first objects arrive as creations, which wake each of its Clusters once.
type shareSource struct {
	share   *shareCaches
	watches []Watch
}

func (s shareSource) Start(_ context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return s.share.watchWith(func(ctx context.Context, c cache.Cache, kinds []client.Object) error {
		for _, w := range s.watches {
			if !slices.ContainsFunc(kinds, func(kind client.Object) bool { return reflect.TypeOf(kind) == reflect.TypeOf(w.Object) }) {
				continue
			}
			if err := source.Kind(c, w.Object, w.Handler, w.Predicates...).Start(ctx, queue); err != nil {
				return fmt.Errorf("watch %T in the share: %w", w.Object, err)
			}
		}
		return nil
	})
}

func (s shareSource) String() string { return "the share's Cluster objects and Targets" }
