package workload

import (
	"maps"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestStatefulSetDefaults(t *testing.T) {
	sts := StatefulSet(cluster(), Options{})
	tests := []struct {
		name      string
		got, want any
	}{
		{"is typed for server-side apply", sts.TypeMeta, metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}},
		{"is named after the cluster in its namespace", [2]string{sts.Name, sts.Namespace}, [2]string{"c", "ns"}},
		{"carries the cluster label", sts.Labels, map[string]string{"operator.gnmic.dev/cluster": "c"}},
		{"runs one replica by default", *sts.Spec.Replicas, int32(1)},
		{"is governed by the headless service", sts.Spec.ServiceName, "c"},
		{"starts and stops pods in parallel", sts.Spec.PodManagementPolicy, appsv1.ParallelPodManagement},
		{"rolls pods on change", sts.Spec.UpdateStrategy.Type, appsv1.RollingUpdateStatefulSetStrategyType},
		{"selects its pods by the cluster label", sts.Spec.Selector, &metav1.LabelSelector{MatchLabels: map[string]string{"operator.gnmic.dev/cluster": "c"}}},
		{"labels its pods with the selector", sts.Spec.Template.Labels, map[string]string{"operator.gnmic.dev/cluster": "c"}},
		{"annotates its pods with the bootstrap checksum", sts.Spec.Template.Annotations, map[string]string{ChecksumAnnotation: ConfigChecksum(cluster())}},
		{"gives pods 30s to terminate", *sts.Spec.Template.Spec.TerminationGracePeriodSeconds, int64(30)},
		{"keeps pods unready until the operator reports them configured", sts.Spec.Template.Spec.ReadinessGates,
			[]corev1.PodReadinessGate{{ConditionType: "operator.gnmic.dev/configured"}}},
		{"runs pods as non-root with the runtime's seccomp profile", sts.Spec.Template.Spec.SecurityContext, &corev1.PodSecurityContext{
			RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)), RunAsGroup: ptr(int64(65532)), FSGroup: ptr(int64(65532)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}},
		{"does not mount a ServiceAccount token, which the collector never uses", sts.Spec.Template.Spec.AutomountServiceAccountToken, ptr(false)},
		{"leaves owner references to the reconciler", len(sts.OwnerReferences), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Fatalf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

func TestStatefulSetReplicasFollowTheSpec(t *testing.T) {
	for _, n := range []int32{0, 1, 7} {
		if got := *StatefulSet(cluster(withReplicas(n)), Options{}).Spec.Replicas; got != n {
			t.Fatalf("replicas = %d, want %d", got, n)
		}
	}
}

func TestPodMetadataPrecedence(t *testing.T) {
	c := cluster(func(c *v1alpha1.Cluster) {
		c.Spec.PodLabels = map[string]string{"team": "net", "operator.gnmic.dev/cluster": "hijack"}
		c.Spec.PodAnnotations = map[string]string{"prometheus.io/scrape": "true", ChecksumAnnotation: "stale"}
	})
	tmpl := StatefulSet(c, Options{}).Spec.Template
	tests := []struct {
		name      string
		got, want map[string]string
	}{
		{"adds pod labels and keeps the operator's cluster label", tmpl.Labels, map[string]string{"team": "net", "operator.gnmic.dev/cluster": "c"}},
		{"adds pod annotations and keeps the operator's checksum", tmpl.Annotations, map[string]string{"prometheus.io/scrape": "true", ChecksumAnnotation: ConfigChecksum(c)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !maps.Equal(tt.got, tt.want) {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	if c.Spec.PodLabels["operator.gnmic.dev/cluster"] != "hijack" || c.Spec.PodAnnotations[ChecksumAnnotation] != "stale" {
		t.Fatalf("building the pod metadata modified the Cluster")
	}
}

func TestSchedulingFieldsAreCopied(t *testing.T) {
	c := cluster(func(c *v1alpha1.Cluster) {
		c.Spec.NodeSelector = map[string]string{"role": "telemetry"}
		c.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
		}}}
		c.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "telemetry", Effect: corev1.TaintEffectNoSchedule}}
		c.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
		c.Spec.PriorityClassName = "telemetry-critical"
		c.Spec.ServiceAccountName = "collector"
		c.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	})
	pod := StatefulSet(c, Options{}).Spec.Template.Spec
	tests := []struct {
		name      string
		got, want any
	}{
		{"copies the node selector", pod.NodeSelector, c.Spec.NodeSelector},
		{"copies the affinity", pod.Affinity, c.Spec.Affinity},
		{"copies the tolerations", pod.Tolerations, c.Spec.Tolerations},
		{"copies the topology spread constraints", pod.TopologySpreadConstraints, c.Spec.TopologySpreadConstraints},
		{"copies the priority class", pod.PriorityClassName, c.Spec.PriorityClassName},
		{"copies the service account", pod.ServiceAccountName, c.Spec.ServiceAccountName},
		{"does not mount the service account's token either", pod.AutomountServiceAccountToken, ptr(false)},
		{"copies the image pull secrets", pod.ImagePullSecrets, c.Spec.ImagePullSecrets},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Fatalf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
	pod.NodeSelector["role"] = "changed"
	pod.Affinity.NodeAffinity = nil
	pod.Tolerations[0].Value = "changed"
	if c.Spec.NodeSelector["role"] != "telemetry" || c.Spec.Affinity.NodeAffinity == nil || c.Spec.Tolerations[0].Value != "telemetry" {
		t.Fatalf("the StatefulSet shares memory with the Cluster")
	}
}

func TestBuildersAreDeterministic(t *testing.T) {
	build := func() []any {
		c := cluster(withTLS, withReplicas(3), func(c *v1alpha1.Cluster) {
			c.Spec.PodLabels = map[string]string{"a": "1", "b": "2", "c": "3"}
			c.Spec.PodAnnotations = map[string]string{"x": "1", "y": "2"}
		})
		files := map[string][]byte{"b__ca.crt": []byte("b"), "a__ca.crt": []byte("a")}
		return []any{
			StatefulSet(c, Options{}), HeadlessService(c), BootstrapConfigMap(c), PodDisruptionBudget(c), TargetTLSSecret(c, files),
		}
	}
	want := build()
	for range 5 {
		if got := build(); !reflect.DeepEqual(got, want) {
			t.Fatalf("building twice gives different objects")
		}
	}
}
