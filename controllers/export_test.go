package controllers

import (
	"context"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// TakeOverAsAssigned runs the takeover of cluster, as last read, by a ready replica named identity whose
// last assignment round gave it the Cluster. c writes the takeover and serves as the replica's cache.
func TakeOverAsAssigned(ctx context.Context, c client.Client, identity string, cluster *operatorv1alpha1.Cluster) error {
	s := &Sharding{Identity: identity, LeaseDuration: time.Minute, Clusters: c}
	s.init()
	s.self = shard.Lease{Holder: identity, RenewTime: time.Now(), Duration: time.Minute}
	s.desired[types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}.String()] = identity
	r := &ClusterReconciler{Client: c, APIReader: c, Sharding: s, Recorder: record.NewFakeRecorder(16)}
	return r.takeOver(ctx, cluster)
}

// ShareCacheCopies are the copies of the object named key that the caches of r's share hold, whole or kept by
// name only, one per cache of Cluster objects holding it; newObj makes an empty object of its kind.
func ShareCacheCopies(ctx context.Context, r *ClusterReconciler, key client.ObjectKey, newObj func() client.Object) ([]client.Object, error) {
	share := r.Sharding.share
	share.mu.Lock()
	caches := append(slices.Clone(share.segments), share.pending...)
	share.mu.Unlock()
	var out []client.Object
	for _, c := range caches {
		obj := newObj()
		err := c.cache.Get(ctx, key, obj)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		default:
			out = append(out, obj)
		}
	}
	return out, nil
}

// Covers is true when the caches of s's share hold the Cluster's objects and its namespace's Targets.
func (s *Sharding) Covers(key types.NamespacedName) bool { return s.covers(key) }
