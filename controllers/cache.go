package controllers

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// CacheByObject limits what the operator caches of the built-in kinds to the objects it made (they carry
// operator.gnmic.dev/cluster): a large cluster's Pods and ConfigMaps (or every NetworkPolicy) would otherwise
// fill its memory.
// Secrets are watched through their metadata only; their data is read from the API server when their
// resourceVersion changed (secret_cache.go).
func CacheByObject() map[client.Object]cache.ByObject {
	req, err := labels.NewRequirement(operatorv1alpha1.ClusterLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid label key
	}
	owned := cache.ByObject{Label: labels.NewSelector().Add(*req)}
	return map[client.Object]cache.ByObject{
		&corev1.Pod{}:                   owned,
		&corev1.ConfigMap{}:             owned,
		&corev1.Service{}:               owned,
		&appsv1.StatefulSet{}:           owned,
		&policyv1.PodDisruptionBudget{}: owned,
		&networkingv1.NetworkPolicy{}:   owned,
	}
}

// ShardedCacheByObject is CacheByObject for a sharded replica (--sharding). Its reconciler reads and watches
// the built-in kinds and Targets from the caches of its share (shard_cache.go), so the manager's cache holds
// none of them but Pods, for the metrics API, which every replica serves for every Cluster and which reads a
// pod's name, namespace, labels and UID only: the manager's cache keeps those, without spec or status.
func ShardedCacheByObject() map[client.Object]cache.ByObject {
	byObject := CacheByObject()
	for obj, o := range byObject {
		if _, isPod := obj.(*corev1.Pod); isPod {
			o.Transform = podIdentityOnly
			byObject[obj] = o
		}
	}
	return byObject
}

// podIdentityOnly keeps of a Pod what names it: its name, namespace, labels and UID (and its resourceVersion,
// which the cache needs).
func podIdentityOnly(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil // a tombstone
	}
	return &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace,
		UID: p.UID, Labels: p.Labels, ResourceVersion: p.ResourceVersion, DeletionTimestamp: p.DeletionTimestamp}}, nil
}
