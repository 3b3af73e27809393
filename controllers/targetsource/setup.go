package targetsource

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// SetupWithManager registers the reconciler. A TargetSource wakes when its spec or annotations change (a sync
// requested by SyncRequestedAnnotation), when Wake asks, when its interval has passed, and, under sharding,
// when the members change; its Targets are not watched (each sync lists them from the API server), nor are
// its Secrets (each sync reads them).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Shard != nil {
		ctx := log.IntoContext(context.Background(), mgr.GetLogger().WithName("targetsource"))
		r.Shard.OnMembersChanged(func() { r.lookAtEvery(ctx) })
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&operatorv1alpha1.TargetSource{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		WatchesRawSource(&r.wakes).
		Named("targetsource").
		Complete(r)
}
