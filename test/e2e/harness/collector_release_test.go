package harness

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

func collectorPod(image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-0"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "sidecar", Image: gnmic.ImageRepository + ":0.43.0"},
			{Name: workload.ContainerName, Image: image},
		}},
	}
}

func noCollectors() *Collectors {
	return &Collectors{options: map[string][]fakecollector.Option{}, releases: map[types.NamespacedName]string{},
		refusing: map[types.NamespacedName]string{}, blackholes: map[string][]*Blackhole{}}
}

func TestAPodsCollectorAnswersAsTheReleaseOfItsImage(t *testing.T) {
	for _, tt := range []struct{ image, want string }{
		{gnmic.DefaultImage, gnmic.DefaultRelease},
		{gnmic.ImageRepository + ":0.42.0", "0.42.0"},
		{gnmic.ImageRepository + ":0.44.1-scratch", "0.44.1"},
		{gnmic.ImageRepository + ":0.46.0@sha256:0123", "0.46.0"},
		{gnmic.ImageRepository + ":latest", fakecollector.NewestRelease},
		{"registry.example/gnmic:0.43.0", fakecollector.NewestRelease},
	} {
		t.Run(tt.image, func(t *testing.T) {
			collector := noCollectors().newCollector(collectorPod(tt.image), nil)
			defer collector.Close()
			if got := collector.Release(); got != tt.want {
				t.Fatalf("image %s runs a collector of %s, want %s", tt.image, got, tt.want)
			}
		})
	}
}

func TestAForcedReleaseWinsOverTheImage(t *testing.T) {
	c := noCollectors()
	c.UseOptions("ns", append(DefaultCollectorOptions(), fakecollector.WithRelease("0.44.0"))...)
	pod := collectorPod(gnmic.ImageRepository + ":0.46.0")
	collector := c.newCollector(pod, nil)
	defer collector.Close()
	if got := collector.Release(); got != "0.44.0" {
		t.Fatalf("namespace forced 0.44.0 and the pod runs %s", got)
	}

	c.UseRelease("ns", "c-0", "0.43.0")
	forced := c.newCollector(pod, nil)
	defer forced.Close()
	if got := forced.Release(); got != "0.43.0" {
		t.Fatalf("pod forced 0.43.0 and runs %s", got)
	}
}
