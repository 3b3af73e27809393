package workload

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// terminationGracePeriod lets a collector flush its outputs when it stops.
const terminationGracePeriod int64 = 30

// StatefulSet runs the collector pods of c. It is named after the Cluster and
// governed by the headless Service of the same name, so every pod has a
// stable name and DNS name. Pods start and stop in parallel (they share no
// state; ordering would only slow scaling) and roll one at a time on change.
func StatefulSet(c *v1alpha1.Cluster, opts Options) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: objectMeta(c),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr(Replicas(c)),
			Selector:            &metav1.LabelSelector{MatchLabels: Labels(c)},
			ServiceName:         c.Name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels(c), Annotations: podAnnotations(c)},
				Spec:       podSpec(c, opts),
			},
		},
	}
}

// podLabels are spec.podLabels plus Labels; the operator's label wins, since
// the StatefulSet selects the pods with it.
func podLabels(c *v1alpha1.Cluster) map[string]string {
	out := maps.Clone(c.Spec.PodLabels)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, Labels(c))
	return out
}

// podAnnotations are spec.podAnnotations plus ChecksumAnnotation, which wins.
func podAnnotations(c *v1alpha1.Cluster) map[string]string {
	out := maps.Clone(c.Spec.PodAnnotations)
	if out == nil {
		out = map[string]string{}
	}
	out[ChecksumAnnotation] = ConfigChecksum(c)
	return out
}

// podSpec copies the scheduling fields of c and runs one collector
// container. The readiness gate keeps a pod unready until the operator
// reports that it holds its configuration, so that the StatefulSet rolls
// the next pod (and a PodDisruptionBudget allows the next eviction) only
// once the previous pod collects its targets again.
// The collector never calls the Kubernetes API (the operator pushes its
// configuration), so its pods mount no ServiceAccount token, even when
// spec.serviceAccountName names an account.
func podSpec(c *v1alpha1.Cluster, opts Options) corev1.PodSpec {
	spec := c.Spec
	pod := corev1.PodSpec{
		Containers:                    []corev1.Container{container(c, opts)},
		ReadinessGates:                []corev1.PodReadinessGate{{ConditionType: v1alpha1.ConditionPodConfigured}},
		Volumes:                       volumes(c, opts),
		SecurityContext:               podSecurityContext(),
		TerminationGracePeriodSeconds: ptr(terminationGracePeriod),
		ServiceAccountName:            spec.ServiceAccountName,
		AutomountServiceAccountToken:  ptr(false),
		PriorityClassName:             spec.PriorityClassName,
		NodeSelector:                  maps.Clone(spec.NodeSelector),
		Affinity:                      spec.Affinity.DeepCopy(),
		ImagePullSecrets:              slices.Clone(spec.ImagePullSecrets),
	}
	for i := range spec.Tolerations {
		pod.Tolerations = append(pod.Tolerations, *spec.Tolerations[i].DeepCopy())
	}
	for i := range spec.TopologySpreadConstraints {
		pod.TopologySpreadConstraints = append(pod.TopologySpreadConstraints, *spec.TopologySpreadConstraints[i].DeepCopy())
	}
	return pod
}

func ptr[T any](v T) *T { return &v }
