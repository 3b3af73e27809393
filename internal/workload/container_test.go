package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func collector(c *v1alpha1.Cluster) corev1.Container {
	containers := StatefulSet(c, Options{}).Spec.Template.Spec.Containers
	if len(containers) != 1 {
		panic("want exactly one container")
	}
	return containers[0]
}

func TestCollectorContainer(t *testing.T) {
	c := cluster(withPort(9000), func(c *v1alpha1.Cluster) {
		c.Spec.ImagePullPolicy = corev1.PullIfNotPresent
		c.Spec.Env = []corev1.EnvVar{{Name: "KAFKA_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "kafka"}, Key: "password",
		}}}}
		c.Spec.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
	})
	ctr := collector(c)
	tests := []struct {
		name      string
		got, want any
	}{
		{"is named gnmic", ctr.Name, "gnmic"},
		{"runs the spec's image and pull policy", [2]string{ctr.Image, string(ctr.ImagePullPolicy)}, [2]string{c.Spec.Image, "IfNotPresent"}},
		{"collects with the bootstrap config", ctr.Args, []string{"--config", "/etc/gnmic/gnmic.yaml", "collect"}},
		{"leaves the image's entrypoint", ctr.Command, []string(nil)},
		{"exposes the REST port by name", ctr.Ports, []corev1.ContainerPort{{Name: "rest", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}},
		{"passes the spec's environment", ctr.Env, c.Spec.Env},
		{"takes the spec's resources", ctr.Resources, c.Spec.Resources},
		{"drops every capability on a read-only root filesystem", ctr.SecurityContext, &corev1.SecurityContext{
			RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)), AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Fatalf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

func TestProbes(t *testing.T) {
	rest := intstr.FromString("rest")
	tests := []struct {
		name    string
		cluster *v1alpha1.Cluster
		want    corev1.ProbeHandler
	}{
		{
			name:    "probes GET /api/v1/healthz on the REST port over plain HTTP when the Cluster opts out of TLS",
			cluster: cluster(insecure),
			want:    corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/api/v1/healthz", Port: rest, Scheme: corev1.URISchemeHTTP}},
		},
		{
			name:    "probes a TCP connect when the API requires client certificates the kubelet cannot present, by default",
			cluster: cluster(),
			want:    corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: rest}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctr := collector(tt.cluster)
			for _, p := range []*corev1.Probe{ctr.ReadinessProbe, ctr.LivenessProbe} {
				if p == nil || !reflect.DeepEqual(p.ProbeHandler, tt.want) {
					t.Fatalf("probe = %#v, want handler %#v", p, tt.want)
				}
			}
			if ctr.LivenessProbe.FailureThreshold*ctr.LivenessProbe.PeriodSeconds < 60 {
				t.Fatalf("liveness gives up in less than a minute: %#v", ctr.LivenessProbe)
			}
		})
	}
}

func TestCollectorRestartsCountsTheCollectorContainerOnly(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{Name: "sidecar", RestartCount: 7},
		{Name: ContainerName, RestartCount: 2},
	}}}
	if got := CollectorRestarts(pod); got != 2 {
		t.Errorf("CollectorRestarts = %d, want the collector container's 2", got)
	}
	if got := CollectorRestarts(&corev1.Pod{}); got != 0 {
		t.Errorf("CollectorRestarts of a pod without statuses = %d, want 0", got)
	}
}
