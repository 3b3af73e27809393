package workload

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
)

// Names of the fixed volumes of a collector pod.
const (
	configVolume    = "config"
	tmpVolume       = "tmp"
	apiTLSVolume    = "api-tls"
	targetTLSVolume = "target-tls"
	gnmiTLSVolume   = "gnmi-tls"
	tunnelTLSVolume = "tunnel-tls"
)

// File modes: the configuration is world-readable, key material only by the
// collector's group (fsGroup).
const (
	configMode int32 = 0o444
	secretMode int32 = 0o440
)

// volumes are, in this order: the bootstrap ConfigMap, an emptyDir for /tmp,
// the API TLS Secret unless spec.api.insecure opts out of TLS, the Cluster's target TLS
// Secret, and the gNMI server's TLS Secret when the server runs with TLS.
//
// The target TLS Secret holds the TLS files of every target of the Cluster
// (render.BundleTLS), so the volumes never depend on which targets need TLS:
// a new TLS Secret changes that Secret's data and the kubelet updates the
// files in running pods, without a new pod template. It is mounted whole, not
// through subPath, which the kubelet never refreshes.
//
// Both Secrets are required. A collector cannot serve its API without the
// API TLS Secret, so the pod waits until the operator has issued it. The
// operator creates the target TLS Secret before the StatefulSet and always
// keeps it; were it deleted, an optional volume would be emptied in running
// pods at the kubelet's next sync, while a required one keeps its files, and
// a new pod waits for the reconcile that its own creation triggers.
func volumes(c *v1alpha1.Cluster, opts Options) []corev1.Volume {
	vols := []corev1.Volume{
		{Name: configVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: c.Name}, DefaultMode: ptr(configMode),
		}}},
		{Name: tmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if APITLS(c) {
		vols = append(vols, secretVolume(apiTLSVolume, opts.apiTLSSecret(c), false))
	}
	vols = append(vols, secretVolume(targetTLSVolume, TargetTLSSecretName(c), false))
	if GNMIServerEnabled(c) && APITLS(c) {
		vols = append(vols, secretVolume(gnmiTLSVolume, GNMITLSSecretName(c), false))
	}
	if TunnelEnabled(c) && APITLS(c) {
		vols = append(vols, secretVolume(tunnelTLSVolume, TunnelTLSSecretName(c), false))
	}
	return vols
}

// volumeMounts mount the volumes in the same order; all but /tmp read-only.
func volumeMounts(c *v1alpha1.Cluster, opts Options) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{
		{Name: configVolume, MountPath: ConfigDir, ReadOnly: true},
		{Name: tmpVolume, MountPath: "/tmp"},
	}
	if APITLS(c) {
		mounts = append(mounts, corev1.VolumeMount{Name: apiTLSVolume, MountPath: APITLSDir, ReadOnly: true})
	}
	mounts = append(mounts, corev1.VolumeMount{Name: targetTLSVolume, MountPath: render.TLSRoot, ReadOnly: true})
	if GNMIServerEnabled(c) && APITLS(c) {
		mounts = append(mounts, corev1.VolumeMount{Name: gnmiTLSVolume, MountPath: GNMITLSDir, ReadOnly: true})
	}
	if TunnelEnabled(c) && APITLS(c) {
		mounts = append(mounts, corev1.VolumeMount{Name: tunnelTLSVolume, MountPath: TunnelTLSDir, ReadOnly: true})
	}
	return mounts
}

func secretVolume(name, secret string, optional bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, DefaultMode: ptr(secretMode), Optional: ptr(optional),
	}}}
}
