package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/domains"
)

func withDomains(names ...string) func(*v1alpha1.Cluster) {
	return func(c *v1alpha1.Cluster) {
		for _, n := range names {
			c.Spec.Domains = append(c.Spec.Domains, v1alpha1.ClusterDomain{Name: n})
		}
	}
}

func TestDomainPodNames(t *testing.T) {
	c := cluster(withDomains("zone-a", "zone-a-1", "zone-b"))
	tests := []struct {
		pod     string
		slot    int
		belongs bool
	}{
		{"c-zone-a-0", domains.Slot(0, 0), true},
		{"c-zone-a-12", domains.Slot(0, 12), true},
		{"c-zone-a-1-0", domains.Slot(1, 0), true}, // zone-a-1's first pod, not zone-a's
		{"c-zone-a-1", domains.Slot(0, 1), true},   // zone-a's second pod
		{"c-zone-b-3", domains.Slot(2, 3), true},
		{"c-0", 0, false},         // the StatefulSet without domains is not a domain's
		{"c-zone-c-0", 0, false},  // no such domain
		{"c-zone-a-01", 0, false}, // not a plain number
		{"d-zone-a-0", 0, false},  // another Cluster's
	}
	for _, tt := range tests {
		t.Run(tt.pod, func(t *testing.T) {
			slot, ok := PodOrdinal(c, tt.pod)
			if ok != tt.belongs || (ok && slot != tt.slot) {
				t.Fatalf("PodOrdinal(%q) = %d, %v; want %d, %v", tt.pod, slot, ok, tt.slot, tt.belongs)
			}
			if ok && PodName(c, slot) != tt.pod {
				t.Errorf("PodName(%d) = %q, want %q", slot, PodName(c, slot), tt.pod)
			}
		})
	}
	if got := PodHost(c, domains.Slot(2, 3)); got != "c-zone-b-3.c.ns.svc" {
		t.Errorf("PodHost = %q: a domain's pod answers through the Cluster's headless Service", got)
	}
}

func TestDomainStatefulSet(t *testing.T) {
	c := cluster(func(c *v1alpha1.Cluster) {
		c.Spec.NodeSelector = map[string]string{"pool": "collectors", "topology.kubernetes.io/zone": "any"}
		c.Spec.Tolerations = []corev1.Toleration{{Key: "collectors", Operator: corev1.TolerationOpExists}}
		c.Spec.PodLabels = map[string]string{"app": "gnmic"}
		c.Spec.Domains = []v1alpha1.ClusterDomain{
			{Name: "zone-a", NodeSelector: map[string]string{"topology.kubernetes.io/zone": "a"}},
			{Name: "zone-b", Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}},
		}
	})
	a, b := DomainStatefulSet(c, 0, 3, Options{}), DomainStatefulSet(c, 1, 2, Options{})
	domainA := map[string]string{"operator.gnmic.dev/cluster": "c", "operator.gnmic.dev/domain": "zone-a"}
	tests := []struct {
		name      string
		got, want any
	}{
		{"is named <cluster>-<domain>", [2]string{a.Name, b.Name}, [2]string{"c-zone-a", "c-zone-b"}},
		{"carries the cluster and domain labels", a.Labels, domainA},
		{"selects only its domain's pods", a.Spec.Selector, &metav1.LabelSelector{MatchLabels: domainA}},
		{"labels its pods with the pod labels, cluster and domain", a.Spec.Template.Labels,
			map[string]string{"app": "gnmic", "operator.gnmic.dev/cluster": "c", "operator.gnmic.dev/domain": "zone-a"}},
		{"runs the replicas the split gives it", [2]int32{*a.Spec.Replicas, *b.Spec.Replicas}, [2]int32{3, 2}},
		{"is governed by the Cluster's headless service", [2]string{a.Spec.ServiceName, b.Spec.ServiceName}, [2]string{"c", "c"}},
		{"lays the domain's node selector over the Cluster's", a.Spec.Template.Spec.NodeSelector,
			map[string]string{"pool": "collectors", "topology.kubernetes.io/zone": "a"}},
		{"keeps the Cluster's node selector when the domain has none", b.Spec.Template.Spec.NodeSelector,
			map[string]string{"pool": "collectors", "topology.kubernetes.io/zone": "any"}},
		{"adds the domain's tolerations to the Cluster's", b.Spec.Template.Spec.Tolerations, []corev1.Toleration{
			{Key: "collectors", Operator: corev1.TolerationOpExists}, {Key: "spot", Operator: corev1.TolerationOpExists}}},
		{"uses the domain's affinity when set", b.Spec.Template.Spec.Affinity, &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}},
		{"leaves the Cluster's node selector alone", c.Spec.NodeSelector,
			map[string]string{"pool": "collectors", "topology.kubernetes.io/zone": "any"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}
