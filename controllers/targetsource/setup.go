package targetsource

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// SetupWithManager registers the reconciler. A TargetSource wakes when its spec or annotations change (a sync
// requested by SyncRequestedAnnotation), when Wake asks, and when its interval has passed; its Targets are not watched (each sync lists them from the API server), nor are its Secrets
// (each sync reads them).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&operatorv1alpha1.TargetSource{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		WatchesRawSource(&r.wakes).
		Named("targetsource").
		Complete(r)
}
