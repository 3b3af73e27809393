package controllers

import (
	"context"
	"fmt"
	"os"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// The operator keeps a NetworkPolicy per Cluster (workload.NetworkPolicy): only its own pods reach the
// collectors' REST API, and the ports the outputs listen on are open to spec.networkPolicy.outputPeers (to
// everyone when none are named).
//
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;delete

// serviceAccountNamespaceFile holds the namespace of a pod's ServiceAccount, which is the pod's namespace.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ensureNetworkPolicy makes the Cluster's NetworkPolicy match its spec and the outputs its collectors are
// sent, or deletes it when the Cluster disables it. While the configuration as a whole does not render, which
// outputs the collectors hold is not known: the policy stays as it is.
func (r *ClusterReconciler) ensureNetworkPolicy(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	if w.renderErr != nil {
		return nil
	}
	np := workload.NetworkPolicy(cluster, r.operatorPeer(), workload.OutputPorts(w.rendered.Outputs))
	if np == nil {
		return r.deleteNetworkPolicy(ctx, cluster)
	}
	return ensureOwned(ctx, r, cluster, np, &networkingv1.NetworkPolicy{}, func(have, want *networkingv1.NetworkPolicy) {
		have.Spec = want.Spec
	})
}

// deleteNetworkPolicy deletes the Cluster's NetworkPolicy when the cache holds one: a delete on every
// reconcile would be a write each time.
func (r *ClusterReconciler) deleteNetworkPolicy(ctx context.Context, cluster *operatorv1alpha1.Cluster) error {
	stale := &networkingv1.NetworkPolicy{}
	err := r.Get(ctx, client.ObjectKeyFromObject(cluster), stale)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get network policy %s: %w", cluster.Name, err)
	}
	log.FromContext(ctx).Info("deleting", "kind", "NetworkPolicy", "name", stale.Name)
	if err := r.Delete(ctx, stale); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete network policy %s: %w", stale.Name, err)
	}
	return nil
}

// operatorPeer is how the NetworkPolicies recognise the operator's pods.
func (r *ClusterReconciler) operatorPeer() workload.OperatorPeer {
	labels := r.OperatorPodLabels
	if len(labels) == 0 {
		labels = workload.DefaultOperatorPodLabels()
	}
	return workload.OperatorPeer{Namespace: r.OperatorNamespace, PodLabels: labels}
}

// runningNamespace is the namespace the operator's pod runs in: POD_NAMESPACE (config/manager sets it from
// the pod's metadata), else its ServiceAccount's namespace file; empty outside a pod.
func runningNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	raw, err := os.ReadFile(serviceAccountNamespaceFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(raw))
}
