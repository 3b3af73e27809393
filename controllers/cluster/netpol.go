package cluster

import (
	"context"
	"os"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
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
func (r *Reconciler) ensureNetworkPolicy(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	if w.renderErr != nil {
		return nil
	}
	np := workload.NetworkPolicy(cluster, r.operatorPeer(), workload.OutputPorts(w.rendered.Outputs))
	if np == nil {
		return owned.Delete(ctx, r.owned, cluster, "NetworkPolicy", client.ObjectKeyFromObject(cluster), &networkingv1.NetworkPolicy{})
	}
	return owned.Ensure(ctx, r.owned, cluster, np, &networkingv1.NetworkPolicy{}, func(have, want *networkingv1.NetworkPolicy) {
		have.Spec = want.Spec
	})
}

// operatorPeer is how the NetworkPolicies recognise the operator's pods.
func (r *Reconciler) operatorPeer() workload.OperatorPeer {
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
