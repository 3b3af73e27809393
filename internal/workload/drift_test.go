package workload

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// served is sts as the API server returns it: with its defaults, its metadata, a status, and what other
// tools add (a label, kubectl rollout restart's annotation).
func served(sts *appsv1.StatefulSet) *appsv1.StatefulSet {
	live := sts.DeepCopy()
	live.TypeMeta = metav1.TypeMeta{}
	live.UID, live.ResourceVersion, live.Generation = "1234", "99", 3
	live.CreationTimestamp = metav1.Now()
	live.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "gnmic-operator", Operation: metav1.ManagedFieldsOperationUpdate}}
	live.Labels["app.kubernetes.io/managed-by"] = "argocd"
	live.Spec.RevisionHistoryLimit = ptr(int32(10))
	live.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(0))}
	live.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
	live.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = "2026-11-22T17:40:12Z"
	pod := &live.Spec.Template.Spec
	pod.RestartPolicy, pod.DNSPolicy, pod.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, "default-scheduler"
	ctr := &pod.Containers[0]
	ctr.ImagePullPolicy, ctr.TerminationMessagePath = corev1.PullIfNotPresent, "/dev/termination-log"
	ctr.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	live.Status = appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2, ObservedGeneration: 3}
	return live
}

func TestDrift(t *testing.T) {
	withCPU := func(q string) func(*v1alpha1.Cluster) {
		return func(c *v1alpha1.Cluster) {
			c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
		}
	}
	desired := StatefulSet(cluster(withReplicas(3), withCPU("1000m")), Options{})
	desired.OwnerReferences = []metav1.OwnerReference{{APIVersion: "operator.gnmic.dev/v1alpha1", Kind: "Cluster", Name: "c",
		UID: "c-uid", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	tests := []struct {
		name  string
		edit  func(*appsv1.StatefulSet)
		drift []string
	}{
		{name: "finds none in what the API server and other tools add", edit: func(*appsv1.StatefulSet) {}},
		{name: "finds a scale by hand", edit: func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr(int32(5)) },
			drift: []string{"spec.replicas"}},
		{name: "finds a changed image", edit: func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "gnmic:evil" },
			drift: []string{"spec.template.spec.containers[0].image"}},
		{name: "finds an added container", edit: func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.Containers = append(s.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar"})
		}, drift: []string{"spec.template.spec.containers"}},
		{name: "finds a pointer set to false turned true", edit: func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.AutomountServiceAccountToken = ptr(true)
		}, drift: []string{"spec.template.spec.automountServiceAccountToken"}},
		{name: "finds a pointer it sets removed", edit: func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.SecurityContext = nil },
			drift: []string{"spec.template.spec.securityContext"}},
		{name: "finds a removed label and a changed annotation", edit: func(s *appsv1.StatefulSet) {
			delete(s.Labels, v1alpha1.ClusterLabel)
			s.Spec.Template.Annotations[ChecksumAnnotation] = "stale"
		}, drift: []string{"metadata.labels[operator.gnmic.dev/cluster]", "spec.template.metadata.annotations[operator.gnmic.dev/config-checksum]"}},
		{name: "finds a label added to a selector", edit: func(s *appsv1.StatefulSet) { s.Spec.Selector.MatchLabels["extra"] = "x" },
			drift: []string{"spec.selector.matchLabels"}},
		{name: "finds a different quantity, not another spelling of the same", edit: func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}, drift: []string{"spec.template.spec.containers[0].resources.requests[cpu]"}},
		{name: "finds a removed owner reference", edit: func(s *appsv1.StatefulSet) { s.OwnerReferences = nil },
			drift: []string{"metadata.ownerReferences"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := served(desired)
			tt.edit(live)
			if got := Drift(live, desired); !reflect.DeepEqual(got, tt.drift) {
				t.Fatalf("Drift = %q, want %q", got, tt.drift)
			}
		})
	}
}

func TestDriftOfTheOtherObjects(t *testing.T) {
	c := cluster(withReplicas(3))
	svc, cm, pdb := HeadlessService(c), BootstrapConfigMap(c), PodDisruptionBudget(c)
	tests := []struct {
		name          string
		live, desired any
		drift         []string
	}{
		{name: "finds none in a Service with its allocated fields", live: func() *corev1.Service {
			s := svc.DeepCopy()
			s.Spec.ClusterIPs, s.Spec.IPFamilies = []string{"None"}, []corev1.IPFamily{corev1.IPv4Protocol}
			s.Spec.IPFamilyPolicy, s.Spec.SessionAffinity = ptr(corev1.IPFamilyPolicySingleStack), corev1.ServiceAffinityNone
			s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyCluster)
			return s
		}(), desired: svc},
		{name: "finds a changed Service port", live: func() *corev1.Service {
			s := svc.DeepCopy()
			s.Spec.Ports[0].Port = 9999
			return s
		}(), desired: svc, drift: []string{"spec.ports[0].port"}},
		{name: "finds an added Service port", live: func() *corev1.Service {
			s := svc.DeepCopy()
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "extra", Port: 8080})
			return s
		}(), desired: svc, drift: []string{"spec.ports"}},
		{name: "finds an edited bootstrap file", live: func() *corev1.ConfigMap {
			m := cm.DeepCopy()
			m.Data[ConfigFile] = "log: false\n"
			return m
		}(), desired: cm, drift: []string{"data[gnmic.yaml]"}},
		{name: "finds a file added to the bootstrap ConfigMap", live: func() *corev1.ConfigMap {
			m := cm.DeepCopy()
			m.Data["extra.yaml"] = "x"
			return m
		}(), desired: cm, drift: []string{"data"}},
		{name: "finds none in a budget with its status", live: func() *policyv1.PodDisruptionBudget {
			b := pdb.DeepCopy()
			b.Status = policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3}
			return b
		}(), desired: pdb},
		{name: "finds a changed budget", live: func() *policyv1.PodDisruptionBudget {
			b := pdb.DeepCopy()
			b.Spec.MaxUnavailable = ptr(intstr.FromInt32(2))
			return b
		}(), desired: pdb, drift: []string{"spec.maxUnavailable"}},
		{name: "tells objects of different types apart", live: cm, desired: svc, drift: []string{"<*v1.ConfigMap is not *v1.Service>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Drift(tt.live, tt.desired); !reflect.DeepEqual(got, tt.drift) {
				t.Fatalf("Drift = %q, want %q", got, tt.drift)
			}
		})
	}
}

func TestMergedKeepsWhatOthersAddAndSetsWhatTheOperatorWants(t *testing.T) {
	have := map[string]string{"team": "netops", "operator.gnmic.dev/cluster": "old"}
	got := Merged(have, map[string]string{"operator.gnmic.dev/cluster": "telemetry"})
	want := map[string]string{"team": "netops", "operator.gnmic.dev/cluster": "telemetry"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merged = %v, want %v", got, want)
	}
	if got := Merged(nil, map[string]string{"a": "b"}); !reflect.DeepEqual(got, map[string]string{"a": "b"}) {
		t.Errorf("Merged into nil = %v", got)
	}
}
