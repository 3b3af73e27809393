package cluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// ensureGNMIServer keeps the Service <cluster>-gnmi of the collectors' gNMI server, and deletes it when the
// server stops. (Its certificates are kept with the collector API's, by observe: credentials.GNMITLS.)
func (r *Reconciler) ensureGNMIServer(ctx context.Context, cluster *operatorv1alpha1.Cluster) error {
	svc := workload.GNMIService(cluster)
	if svc == nil {
		return r.deleteControlledService(ctx, cluster, workload.GNMIServiceName(cluster))
	}
	return owned.Ensure(ctx, r.owned, cluster, svc, &corev1.Service{}, keepAllocated)
}

// deleteControlledService deletes the Service name when the cache has one the Cluster controls: a Service of
// that name may be another Cluster's (the headless Service of a Cluster named <cluster>-gnmi).
func (r *Reconciler) deleteControlledService(ctx context.Context, cluster *operatorv1alpha1.Cluster, name string) error {
	var svc corev1.Service
	err := r.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, &svc)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get service %s: %w", name, err)
	}
	if owner := metav1.GetControllerOf(&svc); owner == nil || owner.UID != cluster.UID || !svc.DeletionTimestamp.IsZero() {
		return nil
	}
	log.FromContext(ctx).Info("deleting", "kind", "Service", "name", name)
	if err := r.Delete(ctx, &svc); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete service %s: %w", name, err)
	}
	return nil
}
