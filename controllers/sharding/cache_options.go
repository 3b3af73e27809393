package sharding

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheByObject is the manager's cache options of a sharded replica (--sharding), given those of an unsharded
// one. Its Cluster reconciler reads and watches the objects of its Clusters and Targets from the caches of its
// share (share_caches.go), so the manager's cache holds none of them but Pods, for the metrics API, which every
// replica serves for every Cluster and which reads a pod's name, namespace, labels and UID only: the manager's
// cache keeps those, without spec or status.
func CacheByObject(unsharded map[client.Object]cache.ByObject) map[client.Object]cache.ByObject {
	byObject := maps.Clone(unsharded)
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
