package workload

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/domains"
)

// DefaultRestPort is the collector REST port when spec.api.restPort is unset
// (the CRD defaults it to the same value).
const DefaultRestPort int32 = 7890

// Labels are the labels of every object of the Cluster and the selector of
// its pods.
func Labels(c *v1alpha1.Cluster) map[string]string {
	return map[string]string{v1alpha1.ClusterLabel: c.Name}
}

// Selector is Labels as a label selector string, for status.selector (the
// scale subresource) and autoscalers: operator.gnmic.dev/cluster=<name>.
func Selector(c *v1alpha1.Cluster) string {
	return labels.SelectorFromSet(Labels(c)).String()
}

// Replicas is the desired number of collector pods: spec.replicas, 1 when
// unset.
func Replicas(c *v1alpha1.Cluster) int32 {
	if c.Spec.Replicas == nil {
		return 1
	}
	return *c.Spec.Replicas
}

// RestPort is the port of the collectors' REST API.
func RestPort(c *v1alpha1.Cluster) int32 {
	if c.Spec.API.RestPort == 0 {
		return DefaultRestPort
	}
	return c.Spec.API.RestPort
}

// APITLS tells whether the collectors of c serve their REST API over mutual
// TLS: always, unless spec.api.insecure opts out.
func APITLS(c *v1alpha1.Cluster) bool {
	return c.Spec.API.Insecure == nil
}

// PodName is the name of the collector pod with the given ordinal, as the
// StatefulSet names it. On a Cluster with domains the ordinal is the pod's
// placement number (domains.Slot) and the pod is
// <cluster>-<domain>-<ordinal in its domain>.
func PodName(c *v1alpha1.Cluster, ordinal int) string {
	if len(c.Spec.Domains) == 0 {
		return fmt.Sprintf("%s-%d", c.Name, ordinal)
	}
	index, inDomain := domains.Locate(ordinal)
	if index >= len(c.Spec.Domains) {
		return fmt.Sprintf("%s-%d", c.Name, ordinal)
	}
	return fmt.Sprintf("%s-%d", DomainStatefulSetName(c, index), inDomain)
}

// PodOrdinal returns the ordinal of the collector pod podName of c: 12 for
// "<cluster>-12". It rejects names of other Clusters' pods (including those
// of a Cluster whose name extends c's, such as "<cluster>-1-0"), and
// ordinals that are not plain decimal numbers. On a Cluster with domains it
// returns the placement number of "<cluster>-<domain>-<ordinal>"
// (domains.Slot) and rejects the names of pods of no declared domain: the
// rest of the name after a domain's prefix must be a plain number, so two
// domains never claim one name (zone-a and zone-a-1 give c-zone-a-1 to zone-a
// and c-zone-a-1-0 to zone-a-1).
func PodOrdinal(c *v1alpha1.Cluster, podName string) (int, bool) {
	if len(c.Spec.Domains) == 0 {
		return ordinalAfter(podName, c.Name+"-")
	}
	for i := range c.Spec.Domains {
		if n, ok := ordinalAfter(podName, DomainStatefulSetName(c, i)+"-"); ok && n < domains.Stride {
			return domains.Slot(i, n), true
		}
	}
	return 0, false
}

// ordinalAfter parses the plain decimal number that follows prefix in name.
func ordinalAfter(name, prefix string) (int, bool) {
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok || digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return n, true
}

// DomainStatefulSetName is the name of the StatefulSet of the domain at
// index of spec.domains: <cluster>-<domain>.
func DomainStatefulSetName(c *v1alpha1.Cluster, index int) string {
	return c.Name + "-" + c.Spec.Domains[index].Name
}

// PodHost is the DNS name of a collector pod through the headless Service:
// <pod>.<cluster>.<namespace>.svc. It resolves also while the pod is not
// ready (the Service publishes not-ready addresses).
func PodHost(c *v1alpha1.Cluster, ordinal int) string {
	return fmt.Sprintf("%s.%s.%s.svc", PodName(c, ordinal), c.Name, c.Namespace)
}
