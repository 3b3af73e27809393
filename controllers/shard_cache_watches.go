package controllers

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// shareWatch is one of the reconciler's watches of a kind the share holds.
type shareWatch struct {
	object     client.Object
	handler    handler.EventHandler
	predicates []predicate.Predicate
}

// shareWatches are the sharded reconciler's watches of its Clusters' own objects and of Targets: the same
// handlers as the unsharded watches in SetupWithManager, on the caches of the share.
func (r *ClusterReconciler) shareWatches(mgr ctrl.Manager, targetChanges predicate.Predicate) []shareWatch {
	owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &operatorv1alpha1.Cluster{},
		handler.OnlyControllerOwner())
	return []shareWatch{
		{object: &appsv1.StatefulSet{}, handler: owner},
		{object: &corev1.Service{}, handler: owner},
		{object: &corev1.ConfigMap{}, handler: owner},
		{object: &policyv1.PodDisruptionBudget{}, handler: owner},
		{object: &networkingv1.NetworkPolicy{}, handler: owner},
		{object: &corev1.Pod{}, handler: handler.EnqueueRequestsFromMapFunc(clusterOfPod)},
		{object: &operatorv1alpha1.Target{}, handler: r.wakes.bursts(r.clustersOfTarget), predicates: []predicate.Predicate{targetChanges}},
	}
}

// shareSource feeds the controller the events of every cache of the share, present and future. A new cache's
// first objects arrive as creations, which wake each of its Clusters once.
type shareSource struct {
	share   *shareCaches
	watches []shareWatch
}

func (s shareSource) Start(_ context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return s.share.watchWith(func(ctx context.Context, c cache.Cache, kinds []client.Object) error {
		for _, w := range s.watches {
			if !slices.ContainsFunc(kinds, func(kind client.Object) bool { return reflect.TypeOf(kind) == reflect.TypeOf(w.object) }) {
				continue
			}
			if err := source.Kind(c, w.object, w.handler, w.predicates...).Start(ctx, queue); err != nil {
				return fmt.Errorf("watch %T in the share: %w", w.object, err)
			}
		}
		return nil
	})
}

func (s shareSource) String() string { return "the share's Cluster objects and Targets" }
