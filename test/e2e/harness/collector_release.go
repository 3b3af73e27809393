package harness

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// imageRelease is the option that makes a pod's fake collector answer as the gNMIc release its collector
// container's image is, as the kubelet would run that image: ghcr.io/openconfig/gnmic:X (a digest after the
// tag changes nothing) answers as X, any other image as the newest release. A v0.42 image's real container
// would exit at once (it has no collect command); its fake stands for the API such a gNMIc serves.
func imageRelease(pod *corev1.Pod) []fakecollector.Option {
	for _, c := range pod.Spec.Containers {
		if c.Name != workload.ContainerName {
			continue
		}
		image, _, _ := strings.Cut(c.Image, "@")
		if r, ok := gnmic.ImageRelease(image); ok {
			return []fakecollector.Option{fakecollector.WithRelease(r.String())}
		}
	}
	return nil
}

// UseRelease makes the collectors started from now on for the named pod answer as gNMIc release (such as
// "0.43.0") whatever its image. A whole namespace is forced with UseOptions and fakecollector.WithRelease,
// which also win over the image. Running collectors keep the release they started with.
func (c *Collectors) UseRelease(namespace, pod, release string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releases[types.NamespacedName{Namespace: namespace, Name: pod}] = release
}
