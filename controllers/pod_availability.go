package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// DefaultCollectorSilence is how long a collector whose pod looks ready may fail to answer before the
// operator treats its pod as unavailable (and its grace period starts).
const DefaultCollectorSilence = 10 * time.Second

// lostPod is a pod whose conditions say ready but which cannot serve, and since when.
type lostPod struct {
	since time.Time
	why   string
	// silent is true when only its collector's silence says so (its Node is fine): such a pod is still
	// asked for its state, so that it counts again as soon as it answers.
	silent bool
}

// findLostPods finds the collector pods that look ready but cannot serve: their Node is gone, NotReady or
// unreachable (the kubelet can no longer update them, so they keep showing Ready until the pod garbage
// collector removes them, a minute or more later), or their collector has not answered for CollectorSilence.
// When every ready pod's collector is silent the cause is shared (the operator's network, say) and moving
// targets would help nothing: silence then counts for no pod.
func (r *ClusterReconciler) findLostPods(ctx context.Context, cluster types.NamespacedName, w *world) (map[int]lostPod, error) {
	lost := map[int]lostPod{}
	now := r.now()
	silentSince := r.memoryOf(cluster).silentSince
	readyPods, silentPods := 0, 0
	for ordinal, pod := range w.pods {
		if ready, _ := podReadiness(pod); !ready {
			continue
		}
		readyPods++
		if since, why, gone, err := r.nodeLost(ctx, pod.Spec.NodeName); err != nil {
			return nil, err
		} else if gone {
			lost[ordinal] = lostPod{since: since, why: why}
			continue
		}
		if since, ok := silentSince[pod.UID]; ok && now.Sub(since) >= r.collectorSilence() {
			lost[ordinal] = lostPod{since: since, why: "its collector does not answer", silent: true}
			silentPods++
		}
	}
	if silentPods > 0 && silentPods == readyPods {
		for ordinal, l := range lost {
			if l.silent {
				delete(lost, ordinal)
			}
		}
	}
	return lost, nil
}

// nodeLost tells whether a Node can no longer run its pods, since when and why. A Node that does not exist
// is lost since the operator first saw it missing.
func (r *ClusterReconciler) nodeLost(ctx context.Context, name string) (time.Time, string, bool, error) {
	if name == "" {
		return time.Time{}, "", false, nil
	}
	var node corev1.Node
	err := r.Get(ctx, types.NamespacedName{Name: name}, &node)
	switch {
	case apierrors.IsNotFound(err):
		since, _ := r.nodesMissing.LoadOrStore(name, r.now())
		return since.(time.Time), "its node " + name + " is gone", true, nil
	case err != nil:
		return time.Time{}, "", false, fmt.Errorf("get node %s: %w", name, err)
	}
	r.nodesMissing.Delete(name)
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

// recordSilence remembers, for the next reconcile, since when each collector that was asked and did not
// answer has been silent. Only the pods asked now are kept, so the memory stays bounded by the fleet.
func (r *ClusterReconciler) recordSilence(cluster types.NamespacedName, w *world, asked []int, runtimes collectorRuntimes) {
	memory := r.memoryOf(cluster)
	was := memory.silentSince
	now := map[types.UID]time.Time{}
	for _, ordinal := range asked {
		if runtimes[ordinal].Known {
			continue
		}
		uid := w.pods[ordinal].UID
		since, ok := was[uid]
		if !ok {
			since = r.now()
		}
		now[uid] = since
	}
	memory.silentSince = now
}

// nextSilenceLook is when a collector that is silent now will have been silent for CollectorSilence (zero
// when none is).
func (r *ClusterReconciler) nextSilenceLook(cluster types.NamespacedName) time.Time {
	var next time.Time
	for _, since := range r.memoryOf(cluster).silentSince {
		if at := since.Add(r.collectorSilence()); at.After(r.now()) {
			next = earliest(next, at)
		}
	}
	return next
}

func (r *ClusterReconciler) collectorSilence() time.Duration {
	if r.CollectorSilence > 0 {
		return r.CollectorSilence
	}
	return DefaultCollectorSilence
}

// clustersOfNode wakes the Clusters that have collector pods on a Node that changed or went away.
func (r *ClusterReconciler) clustersOfNode(ctx context.Context, obj client.Object) []reconcile.Request {
	var pods corev1.PodList
	if err := r.List(ctx, &pods); err != nil {
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
