package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// nodeLost tells whether a Node can no longer run its pods, since when and why. A Node that does not exist
// is lost since the operator first saw it missing.
func (r *Reconciler) nodeLost(ctx context.Context, name string) (time.Time, string, bool, error) {
	if name == "" {
		return time.Time{}, "", false, nil
	}
	var node corev1.Node
	// Read only (a Node's status lists every image it holds: copying it per pod per reconcile is not free).
	err := r.Get(ctx, types.NamespacedName{Name: name}, &node, client.UnsafeDisableDeepCopy)
	switch {
	case apierrors.IsNotFound(err):
		return r.nodes.missing(name, r.now()), "its node " + name + " is gone", true, nil
	case err != nil:
		return time.Time{}, "", false, fmt.Errorf("get node %s: %w", name, err)
	}
	r.nodes.seen(name)
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeUnreachable {
			since := node.CreationTimestamp.Time
			if taint.TimeAdded != nil {
				since = taint.TimeAdded.Time
			}
			return since, "its node " + name + " is unreachable", true, nil
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			return c.LastTransitionTime.Time, "its node " + name + " is not ready", true, nil
		}
	}
	return time.Time{}, "", false, nil
}

// clustersOfNode wakes the Clusters that have collector pods on a Node that changed or went away.
func (m clusterMappings) clustersOfNode(ctx context.Context, obj client.Object) []reconcile.Request {
	var pods corev1.PodList
	// Every collector pod of every Cluster, on every event of a Node: read only, without copies.
	if err := m.List(ctx, &pods, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list collector pods for a node event", "node", obj.GetName())
		return nil
	}
	var out []reconcile.Request
	for _, p := range pods.Items {
		if p.Spec.NodeName == obj.GetName() {
			out = append(out, requests(p.Namespace, p.Labels[operatorv1alpha1.ClusterLabel])...)
		}
	}
	return out
}

// nodeAvailabilityChanged passes Node events that can change whether its pods can serve: creation, deletion,
// a change of its Ready condition or of its taints. Nodes' frequent heartbeats pass nothing.
func nodeAvailabilityChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*corev1.Node)
			after, ok2 := e.ObjectNew.(*corev1.Node)
			if !ok1 || !ok2 {
				return true
			}
			return nodeReady(before) != nodeReady(after) || !equality.Semantic.DeepEqual(before.Spec.Taints, after.Spec.Taints)
		},
	}
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// nodeLosses is since when each Node that collector pods name was first seen missing, shared by every Cluster
// with pods on it. Its forgetting rule: an entry goes when the Node is seen again.
type nodeLosses struct{ missingSince sync.Map }

// missing is since when the Node has been missing: now, the first time it is.
func (n *nodeLosses) missing(name string, now time.Time) time.Time {
	since, _ := n.missingSince.LoadOrStore(name, now)
	return since.(time.Time)
}

// seen forgets that the Node was missing.
func (n *nodeLosses) seen(name string) { n.missingSince.Delete(name) }
