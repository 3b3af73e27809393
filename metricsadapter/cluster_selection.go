package metricsadapter

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// clusterLabels is the label set a metric selector is matched against, in both metrics APIs: the Cluster's
// own labels plus cluster=<name>. The name wins over an own label with the key cluster, so that cluster=edge
// always means the Cluster named edge, the one whose values are labelled cluster=edge.
type clusterLabels struct {
	name string
	own  map[string]string
}

func labelsOf(c *operatorv1alpha1.Cluster) clusterLabels {
	return clusterLabels{name: c.Name, own: c.Labels}
}

func (l clusterLabels) Lookup(key string) (string, bool) {
	if key == ClusterMetricLabel {
		return l.name, true
	}
	value, ok := l.own[key]
	return value, ok
}

func (l clusterLabels) Has(key string) bool {
	_, ok := l.Lookup(key)
	return ok
}

func (l clusterLabels) Get(key string) string {
	value, _ := l.Lookup(key)
	return value
}

// set is the label set as a new map, the metricLabels of an external metric value.
func (l clusterLabels) set() map[string]string {
	set := make(map[string]string, len(l.own)+1)
	maps.Copy(set, l.own)
	set[ClusterMetricLabel] = l.name
	return set
}

// namedClusters returns the names a selector requires by cluster=<name>, cluster==<name> or
// cluster in (...), sorted; named is false when it requires none of these. Several such requirements
// name the Clusters every one of them allows (possibly none).
func namedClusters(selector labels.Selector) (names []string, named bool) {
	requirements, _ := selector.Requirements()
	for _, r := range requirements {
		if r.Key() != ClusterMetricLabel {
			continue
		}
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
		default:
			continue
		}
		values := r.Values().UnsortedList()
		if named {
			values = slices.DeleteFunc(values, func(v string) bool { return !slices.Contains(names, v) })
		}
		names, named = values, true
	}
	sort.Strings(names)
	return names, named
}

// chooseClusters decides which Clusters of a namespace answer a metric selector, among candidates: every
// Cluster of the namespace, or at least every one the selector names that exists. It returns those whose
// labels (clusterLabels) the selector matches, sorted by name, and is a NotFound error, naming what is
// missing, when the selector names a Cluster that is not a candidate or matches no Cluster at all. A 0 in
// either case would tell the autoscaler that nothing is needed, and it would scale the fleet down.
func chooseClusters(namespace string, selector labels.Selector, candidates []operatorv1alpha1.Cluster) ([]operatorv1alpha1.Cluster, error) {
	if names, named := namedClusters(selector); named {
		missing := slices.DeleteFunc(slices.Clone(names), func(name string) bool {
			return slices.ContainsFunc(candidates, func(c operatorv1alpha1.Cluster) bool { return c.Name == name })
		})
		if len(missing) > 0 {
			return nil, clustersNotFound(namespace, selector, missing)
		}
	}
	chosen := make([]operatorv1alpha1.Cluster, 0, len(candidates))
	for i := range candidates {
		if selector.Matches(labelsOf(&candidates[i])) {
			chosen = append(chosen, candidates[i])
		}
	}
	if len(chosen) == 0 {
		return nil, clustersNotFound(namespace, selector, nil)
	}
	sort.Slice(chosen, func(i, j int) bool { return chosen[i].Name < chosen[j].Name })
	return chosen, nil
}

// clustersNotFound is the 404 answered instead of a value: the autoscaler keeps the current size and shows
// the message in its ScalingActive condition and a FailedGetExternalMetric event.
func clustersNotFound(namespace string, selector labels.Selector, missing []string) error {
	var message string
	switch {
	case len(missing) == 1:
		message = fmt.Sprintf("Cluster %q not found in namespace %q", missing[0], namespace)
	case len(missing) > 1:
		quoted := make([]string, len(missing))
		for i, name := range missing {
			quoted[i] = fmt.Sprintf("%q", name)
		}
		message = fmt.Sprintf("Clusters %s not found in namespace %q", strings.Join(quoted, ", "), namespace)
	case selector.Empty():
		message = fmt.Sprintf("no Cluster in namespace %q", namespace)
	default:
		message = fmt.Sprintf("no Cluster in namespace %q matches %q", namespace, selector.String())
	}
	details := &metav1.StatusDetails{Group: clustersResource.Group, Kind: clustersResource.Resource}
	if len(missing) == 1 {
		details.Name = missing[0]
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: message,
		Details: details,
	}}
}
