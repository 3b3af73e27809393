package balancer

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// SetupWithManager registers the reconciler. A Balancer wakes when its spec changes (an autoscaler writing
// spec.replicas through the scale subresource included) and when a HorizontalPodAutoscaler that scales one of
// its targets comes, changes or goes. The targets and their pods are not watched, whatever their kind: the
// Balancer looks at them every period, and at the moment a not-started pod's startup timeout ends.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&operatorv1alpha1.Balancer{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&autoscalingv2.HorizontalPodAutoscaler{}, handler.EnqueueRequestsFromMapFunc(r.balancersOfHPA),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Named("balancer").
		Complete(r)
}

// balancersOfHPA are the Balancers of the HPA's namespace with a target the HPA scales.
func (r *Reconciler) balancersOfHPA(ctx context.Context, obj client.Object) []reconcile.Request {
	hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return nil
	}
	var balancers operatorv1alpha1.BalancerList
	// Read only: the cache's own objects, without copies.
	if err := r.List(ctx, &balancers, client.InNamespace(hpa.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list balancers for a HorizontalPodAutoscaler", "hpa", hpa.Name)
		return nil
	}
	var out []reconcile.Request
	for _, b := range balancers.Items {
		for _, t := range b.Spec.Targets {
			if scalesTarget(hpa, t.ScaleTargetRef) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
				break
			}
		}
	}
	return out
}

// scalesTarget tells whether the HPA scales the workload ref names: same API group, kind and name (the
// version does not matter, an object is one object in every version).
func scalesTarget(hpa *autoscalingv2.HorizontalPodAutoscaler, ref operatorv1alpha1.ScaleTargetReference) bool {
	h := hpa.Spec.ScaleTargetRef
	return h.Kind == ref.Kind && h.Name == ref.Name && apiGroup(h.APIVersion) == apiGroup(ref.APIVersion)
}

// apiGroup is the group of an apiVersion ("" for v1, apps for apps/v1); an unparsable one stands for itself.
func apiGroup(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return apiVersion
	}
	return gv.Group
}
