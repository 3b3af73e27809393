package cluster

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
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
func (r *Reconciler) findLostPods(ctx context.Context, cluster types.NamespacedName, w *world) (map[int]lostPod, error) {
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
		if since, ok := silentSince[pod.UID]; ok && now.Sub(since) >= r.CollectorSilence {
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

// recordSilence remembers, for the next reconcile, since when each collector that was asked and did not
// answer has been silent. Only the pods asked now are kept, so the memory stays bounded by the fleet.
func (r *Reconciler) recordSilence(cluster types.NamespacedName, w *world, asked []int, runtimes collectorRuntimes) {
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
func (r *Reconciler) nextSilenceLook(cluster types.NamespacedName) time.Time {
	var next time.Time
	for _, since := range r.memoryOf(cluster).silentSince {
		if at := since.Add(r.CollectorSilence); at.After(r.now()) {
			next = earliest(next, at)
		}
	}
	return next
}
