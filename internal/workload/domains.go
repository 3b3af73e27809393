package workload

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// DomainLabels are Labels plus the domain's name: the labels of a domain's
// StatefulSet and the selector of its pods.
func DomainLabels(c *v1alpha1.Cluster, index int) map[string]string {
	out := Labels(c)
	out[v1alpha1.DomainLabel] = c.Spec.Domains[index].Name
	return out
}

// DomainStatefulSet runs the collector pods of the domain at index of
// spec.domains: replicas pods <cluster>-<domain>-<ordinal>, on the domain's
// nodes. It is the Cluster's StatefulSet (StatefulSet) with the domain's name,
// labels and scheduling: the domain's nodeSelector over the Cluster's, its
// affinity in place of the Cluster's when set, its tolerations after the
// Cluster's. Every domain's StatefulSet is governed by the Cluster's one
// headless Service, so every pod answers at <pod>.<cluster>.<namespace>.svc.
func DomainStatefulSet(c *v1alpha1.Cluster, index int, replicas int32, opts Options) *appsv1.StatefulSet {
	d := c.Spec.Domains[index]
	sts := StatefulSet(c, opts)
	sts.ObjectMeta = metav1.ObjectMeta{Name: DomainStatefulSetName(c, index), Namespace: c.Namespace, Labels: DomainLabels(c, index)}
	sts.Spec.Replicas = ptr(replicas)
	sts.Spec.Selector = &metav1.LabelSelector{MatchLabels: DomainLabels(c, index)}
	maps.Copy(sts.Spec.Template.Labels, DomainLabels(c, index))
	pod := &sts.Spec.Template.Spec
	if len(d.NodeSelector) > 0 {
		if pod.NodeSelector == nil {
			pod.NodeSelector = map[string]string{}
		}
		maps.Copy(pod.NodeSelector, d.NodeSelector)
	}
	if d.Affinity != nil {
		pod.Affinity = d.Affinity.DeepCopy()
	}
	for i := range d.Tolerations {
		pod.Tolerations = append(pod.Tolerations, *d.Tolerations[i].DeepCopy())
	}
	return sts
}

// DomainReplicaLimits are the domain's minReplicas (0 when unset) and
// maxReplicas (nil when unset).
func DomainReplicaLimits(d v1alpha1.ClusterDomain) (int, *int) {
	minimum := 0
	if d.MinReplicas != nil {
		minimum = int(*d.MinReplicas)
	}
	if d.MaxReplicas == nil {
		return minimum, nil
	}
	maximum := int(*d.MaxReplicas)
	return minimum, &maximum
}
