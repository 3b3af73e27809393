package workload

import (
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// ContainerName is the name of the collector container; RestPortName names
// its REST API port in the container, the probes and the Service.
const (
	ContainerName = "gnmic"
	RestPortName  = "rest"
)

// HealthPath answers 200 while the collector's REST API runs.
const HealthPath = "/api/v1/healthz"

// runAsID is the user and group the collector runs as: the conventional
// non-root ID ("nonroot" in distroless images), fixed so that runAsNonRoot
// holds whatever user the image declares.
const runAsID int64 = 65532

// CollectorRestarts is how often the pod's collector container restarted: each restart starts gNMIc with its
// bootstrap configuration alone.
func CollectorRestarts(pod *corev1.Pod) int32 {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == ContainerName {
			return c.RestartCount
		}
	}
	return 0
}

// container is the collector: gnmic --config /etc/gnmic/gnmic.yaml collect.
func container(c *v1alpha1.Cluster, opts Options) corev1.Container {
	spec := c.Spec
	ctr := corev1.Container{
		Name:            ContainerName,
		Image:           spec.Image,
		ImagePullPolicy: spec.ImagePullPolicy,
		Args:            []string{"--config", path.Join(ConfigDir, ConfigFile), "collect"},
		Ports:           containerPorts(c, opts),
		Resources:       *spec.Resources.DeepCopy(),
		// Readiness means the REST API answers, so the operator can push;
		// whether a pod holds its configuration is the ConfigApplied condition.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: probeHandler(c), PeriodSeconds: 5, TimeoutSeconds: 2, SuccessThreshold: 1, FailureThreshold: 3,
		},
		// Liveness tolerates a minute of silence: a collector starting many
		// targets is busy but alive.
		LivenessProbe: &corev1.Probe{
			ProbeHandler: probeHandler(c), PeriodSeconds: 10, TimeoutSeconds: 2, SuccessThreshold: 1, FailureThreshold: 6,
		},
		VolumeMounts:             volumeMounts(c, opts),
		SecurityContext:          containerSecurityContext(),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	for i := range spec.Env {
		ctr.Env = append(ctr.Env, *spec.Env[i].DeepCopy())
	}
	return ctr
}

// containerPorts are the REST API's port, the gNMI server's and the tunnel server's when they run, and those of the scraped outputs.
func containerPorts(c *v1alpha1.Cluster, opts Options) []corev1.ContainerPort {
	ports := []corev1.ContainerPort{{Name: RestPortName, ContainerPort: RestPort(c), Protocol: corev1.ProtocolTCP}}
	if GNMIServerEnabled(c) {
		ports = append(ports, corev1.ContainerPort{Name: GNMIPortName, ContainerPort: GNMIPort(c), Protocol: corev1.ProtocolTCP})
	}
	if TunnelEnabled(c) {
		ports = append(ports, corev1.ContainerPort{Name: TunnelPortName, ContainerPort: TunnelPort(c), Protocol: corev1.ProtocolTCP})
	}
	return append(ports, outputContainerPorts(opts.ScrapedOutputs)...)
}

// probeHandler checks the REST API. With TLS (the default) the collector demands a
// client certificate signed by the operator's CA (client-auth
// require-verify), which the kubelet cannot present: an HTTPS probe would
// fail its handshake and kill healthy pods. A TCP connect then proves that
// the API listens, which is as much as GET /api/v1/healthz says anyway (it
// always answers 200).
func probeHandler(c *v1alpha1.Cluster) corev1.ProbeHandler {
	port := intstr.FromString(RestPortName)
	if APITLS(c) {
		return corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: port}}
	}
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: HealthPath, Port: port, Scheme: corev1.URISchemeHTTP}}
}

// podSecurityContext and containerSecurityContext meet the "restricted" Pod
// Security Standard. The root filesystem is read-only; the collector writes
// only to the emptyDir at /tmp.
func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr(true),
		RunAsUser:      ptr(runAsID),
		RunAsGroup:     ptr(runAsID),
		FSGroup:        ptr(runAsID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr(true),
		RunAsUser:                ptr(runAsID),
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}
