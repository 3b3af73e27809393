package metricsadapter

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// acknowledgedTargets is the number of targets a pod holds, from its Cluster's status.collectors: those it
// acknowledged and the dial-in devices it runs through its tunnel server, which take its capacity as much
// (docs/dial-in.md). An entry recorded for an earlier pod of the same name (another UID) does not count: the
// recreated pod has acknowledged nothing yet.
func acknowledgedTargets(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod) int64 {
	if cluster == nil {
		return 0
	}
	for i := range cluster.Status.Collectors {
		c := &cluster.Status.Collectors[i]
		if c.Pod != pod.Name {
			continue
		}
		if c.UID != "" && types.UID(c.UID) != pod.UID {
			return 0
		}
		return int64(c.Targets) + int64(c.TunnelTargetsCount)
	}
	return 0
}

// clusterTargetsPresent is the sum of the targets the Cluster's pods hold (acknowledgedTargets).
func clusterTargetsPresent(cluster *operatorv1alpha1.Cluster) int64 {
	if cluster == nil {
		return 0
	}
	var sum int64
	for _, c := range cluster.Status.Collectors {
		sum += int64(c.Targets) + int64(c.TunnelTargetsCount)
	}
	return sum
}

// podTargets returns gnmic_targets_present of every pod, in order, reading each pod's Cluster once.
func (f fleetReader) podTargets(ctx context.Context, pods []corev1.Pod) ([]int64, error) {
	clusters := map[string]*operatorv1alpha1.Cluster{}
	values := make([]int64, len(pods))
	for i := range pods {
		pod := &pods[i]
		name, ok := pod.Labels[operatorv1alpha1.ClusterLabel]
		if !ok {
			continue
		}
		cluster, seen := clusters[name]
		if !seen {
			var err error
			cluster, err = f.cluster(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: name})
			if err != nil {
				return nil, fmt.Errorf("targets of pod %s/%s: %w", pod.Namespace, pod.Name, err)
			}
			clusters[name] = cluster
		}
		values[i] = acknowledgedTargets(cluster, pod)
	}
	return values, nil
}
