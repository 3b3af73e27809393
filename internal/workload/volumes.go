package workload

import (
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
)

// Names of the fixed volumes of a collector pod.
const (
	configVolume = "config"
	tmpVolume    = "tmp"
	apiTLSVolume = "api-tls"
)

// File modes: the configuration is world-readable, key material only by the
// collector's group (fsGroup).
const (
	configMode int32 = 0o444
	secretMode int32 = 0o440
)

// volumes are, in this order: the bootstrap ConfigMap, an emptyDir for /tmp,
// the API TLS Secret when spec.api.tls is set, and the target TLS Secrets in
// name order.
//
// Target TLS Secrets are optional: a missing one must not keep every pod from
// starting. The renderer skips the targets whose Secret it cannot read; once
// the Secret exists the kubelet fills the mounted directory. The API TLS
// Secret is required: a collector cannot serve its API without it, so the
// pod waits until the operator has issued it.
func volumes(c *v1alpha1.Cluster, opts Options) []corev1.Volume {
	vols := []corev1.Volume{
		{Name: configVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: c.Name}, DefaultMode: ptr(configMode),
		}}},
		{Name: tmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if c.Spec.API.TLS != nil {
		vols = append(vols, secretVolume(apiTLSVolume, opts.apiTLSSecret(c), false))
	}
	for _, secret := range opts.targetTLSSecrets() {
		vols = append(vols, secretVolume(targetTLSVolume(secret), secret, true))
	}
	return vols
}

// volumeMounts mount the volumes in the same order; all but /tmp read-only.
func volumeMounts(c *v1alpha1.Cluster, opts Options) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{
		{Name: configVolume, MountPath: ConfigDir, ReadOnly: true},
		{Name: tmpVolume, MountPath: "/tmp"},
	}
	if c.Spec.API.TLS != nil {
		mounts = append(mounts, corev1.VolumeMount{Name: apiTLSVolume, MountPath: APITLSDir, ReadOnly: true})
	}
	for _, secret := range opts.targetTLSSecrets() {
		mounts = append(mounts, corev1.VolumeMount{Name: targetTLSVolume(secret), MountPath: render.TLSMountPath(secret), ReadOnly: true})
	}
	return mounts
}

func secretVolume(name, secret string, optional bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, DefaultMode: ptr(secretMode), Optional: ptr(optional),
	}}}
}

// targetTLSVolume names the volume of a target TLS Secret. A Secret name may
// be 253 characters long and contain dots, a volume name is a DNS label of at
// most 63, so the name is derived from a hash of the Secret name: stable, and
// distinct for distinct Secrets.
func targetTLSVolume(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "target-tls-" + hex.EncodeToString(sum[:8])
}
