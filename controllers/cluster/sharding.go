package cluster

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/source"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/sharding"
)

// Sharding is what the Cluster reconciler asks of the operator's sharding when its replicas share the Clusters
// (controllers/sharding, docs/sharding.md).
type Sharding interface {
	turns
	// Serve takes, at setup, what sharding needs of this reconciler (its watches of the share's kinds, the
	// kinds it reads from the manager's cache, how to wake a Cluster and let one go), and is the source of the
	// events of the objects of this replica's share.
	Serve(sharding.Reconciler) source.Source
}

// turns are the questions a reconcile asks: may this replica reconcile the Cluster now (sharding takes it over
// or drains it itself), may it push to its collectors (the fence), and does it clean up after the deleted
// Cluster.
type turns interface {
	Turn(ctx context.Context, cluster *operatorv1alpha1.Cluster) (sharding.Turn, error)
	Fence(ctx context.Context, cluster *operatorv1alpha1.Cluster, turn sharding.Turn) (pushCtx context.Context, end context.CancelFunc, ok bool)
	CleansUp(cluster types.NamespacedName) bool
}

// soleReplica answers for an operator whose one replica (the elected leader) reconciles every Cluster.
type soleReplica struct{}

func (soleReplica) Turn(context.Context, *operatorv1alpha1.Cluster) (sharding.Turn, error) {
	return sharding.Turn{Proceed: true}, nil
}

func (soleReplica) Fence(ctx context.Context, _ *operatorv1alpha1.Cluster, _ sharding.Turn) (context.Context, context.CancelFunc, bool) {
	return ctx, func() {}, true
}

func (soleReplica) CleansUp(types.NamespacedName) bool { return true }
