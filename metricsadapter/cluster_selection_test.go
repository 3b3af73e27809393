package metricsadapter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func namedCluster(name string, own map[string]string) operatorv1alpha1.Cluster {
	return operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name, Labels: own}}
}

// selectionFleet: canary carries an own label cluster=edge, which the name of edge overrides.
func selectionFleet() []operatorv1alpha1.Cluster {
	return []operatorv1alpha1.Cluster{
		namedCluster("edge", map[string]string{"tier": "gold", "site": "par"}),
		namedCluster("core", map[string]string{"tier": "silver"}),
		namedCluster("lab", nil),
		namedCluster("canary", map[string]string{"tier": "gold", ClusterMetricLabel: "edge"}),
	}
}

func names(clusters []operatorv1alpha1.Cluster) []string {
	out := make([]string, len(clusters))
	for i := range clusters {
		out[i] = clusters[i].Name
	}
	return out
}

func TestClusterLabelsAreTheOwnLabelsPlusTheNameUnderCluster(t *testing.T) {
	canary := labelsOf(&operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{
		Name: "canary", Labels: map[string]string{"tier": "gold", ClusterMetricLabel: "edge"},
	}})
	cases := []struct {
		key, value string
		present    bool
	}{
		{ClusterMetricLabel, "canary", true},
		{"tier", "gold", true},
		{"site", "", false},
	}
	for _, tc := range cases {
		value, present := canary.Lookup(tc.key)
		if value != tc.value || present != tc.present || canary.Get(tc.key) != tc.value || canary.Has(tc.key) != tc.present {
			t.Errorf("%s: %q (present %t), want %q (present %t)", tc.key, value, present, tc.value, tc.present)
		}
	}
	want := labels.Set{ClusterMetricLabel: "canary", "tier": "gold"}
	if got := labels.Set(canary.set()); !labels.Equals(got, want) {
		t.Errorf("metricLabels %v, want %v", got, want)
	}
	lab := labelsOf(&operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "lab"}})
	if got := labels.Set(lab.set()); !labels.Equals(got, labels.Set{ClusterMetricLabel: "lab"}) {
		t.Errorf("metricLabels of a Cluster without labels %v, want only its name", got)
	}
}

func TestNamedClustersAreTheNamesEveryClusterRequirementAllows(t *testing.T) {
	cases := []struct {
		selector string
		names    []string
		named    bool
	}{
		{"", nil, false},
		{"tier=gold", nil, false},
		{"cluster=edge", []string{"edge"}, true},
		{"cluster==edge", []string{"edge"}, true},
		{"cluster in (lab,edge)", []string{"edge", "lab"}, true},
		{"cluster in (edge,lab),cluster in (lab,core)", []string{"lab"}, true},
		{"cluster=edge,cluster=core", []string{}, true},
		{"cluster=edge,tier=gold", []string{"edge"}, true},
		{"cluster!=edge", nil, false},
		{"cluster notin (edge)", nil, false},
		{"cluster", nil, false},
		{"!cluster", nil, false},
		{"cluster in (edge,lab),cluster!=lab", []string{"edge", "lab"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.selector, func(t *testing.T) {
			got, named := namedClusters(parseSelector(t, tc.selector))
			if named != tc.named || !slices.Equal(got, tc.names) {
				t.Errorf("names %q (named %t), want %q (named %t)", got, named, tc.names, tc.named)
			}
		})
	}
}

func TestChooseClustersAnswersEveryMatchedClusterOrNamesWhatIsMissing(t *testing.T) {
	cases := []struct {
		name, selector string
		want           []string
		err            string
	}{
		{"no selector means every Cluster", "", []string{"canary", "core", "edge", "lab"}, ""},
		{"cluster=<name> means that Cluster, not one labelled cluster=<name>", "cluster=edge", []string{"edge"}, ""},
		{"a Cluster labelled cluster=<other> answers under its own name", "cluster=canary", []string{"canary"}, ""},
		{"a set of names", "cluster in (lab,core)", []string{"core", "lab"}, ""},
		{"an own label", "tier=gold", []string{"canary", "edge"}, ""},
		{"an own label's absence", "!tier", []string{"lab"}, ""},
		{"an exclusion by name", "cluster!=edge", []string{"canary", "core", "lab"}, ""},
		{"a name and an own label", "cluster=edge,site=par", []string{"edge"}, ""},
		{"named Clusters one of which another requirement excludes", "cluster in (edge,core),tier=gold", []string{"edge"}, ""},
		{"an absent name", "cluster=edgee", nil, `Cluster "edgee" not found in namespace "telemetry"`},
		{"an absent name beside present ones", "cluster in (edge,edgee,core)", nil, `Cluster "edgee" not found`},
		{"several absent names", "cluster in (lost,gone)", nil, `Clusters "gone", "lost" not found in namespace "telemetry"`},
		{"an absent name even when another requirement would exclude it", "cluster in (edge,edgee),tier=gold", nil,
			`Cluster "edgee" not found`},
		{"an own label no Cluster has", "tier=glod", nil, `no Cluster in namespace "telemetry" matches "tier=glod"`},
		{"a name whose Cluster lacks an own label", "cluster=edge,tier=silver", nil, `matches "cluster=edge,tier=silver"`},
		{"two names at once", "cluster=edge,cluster=core", nil, `no Cluster in namespace "telemetry" matches`},
		{"the absence of the name label", "!cluster", nil, `no Cluster in namespace "telemetry" matches "!cluster"`},
		{"an exclusion of every Cluster", "cluster notin (canary,core,edge,lab)", nil, `no Cluster in namespace "telemetry" matches`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			chosen, err := chooseClusters(testNamespace, parseSelector(t, tc.selector), selectionFleet())
			if tc.err != "" {
				if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("chose %v, error %v; want a not-found error containing %q", names(chosen), err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(names(chosen), tc.want) {
				t.Fatalf("chose %v, error %v; want %v", names(chosen), err, tc.want)
			}
		})
	}
}

func TestChooseClustersInAnEmptyNamespaceSaysSo(t *testing.T) {
	_, err := chooseClusters("empty", labels.Everything(), nil)
	if !apierrors.IsNotFound(err) || err.Error() != `no Cluster in namespace "empty"` {
		t.Errorf("error %v, want not found: no Cluster in namespace \"empty\"", err)
	}
}

func TestChooseClustersNamesTheMissingClusterInTheStatusDetails(t *testing.T) {
	_, err := chooseClusters(testNamespace, parseSelector(t, "cluster=edgee"), selectionFleet())
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("error %v is not an API status", err)
	}
	details := status.Status().Details
	if details == nil || details.Name != "edgee" || details.Group != operatorv1alpha1.GroupVersion.Group || details.Kind != "clusters" {
		t.Errorf("details %+v, want clusters.%s edgee", details, operatorv1alpha1.GroupVersion.Group)
	}
}

// randomSelector writes a selector the way users do, over the names and own labels of selectionFleet and
// a few that no Cluster has.
func randomSelector(r *rand.Rand) string {
	clusterNames := []string{"edge", "core", "lab", "canary", "edgee", "gone"}
	tiers := []string{"gold", "silver", "glod"}
	pick := func(values []string) string { return values[r.IntN(len(values))] }
	some := func(values []string) string {
		chosen := []string{pick(values)}
		for range r.IntN(3) {
			chosen = append(chosen, pick(values))
		}
		return strings.Join(chosen, ",")
	}
	terms := []func() string{
		func() string { return "cluster=" + pick(clusterNames) },
		func() string { return "cluster!=" + pick(clusterNames) },
		func() string { return "cluster in (" + some(clusterNames) + ")" },
		func() string { return "cluster notin (" + some(clusterNames) + ")" },
		func() string { return "tier=" + pick(tiers) },
		func() string { return "tier in (" + some(tiers) + ")" },
		func() string { return "tier notin (" + some(tiers) + ")" },
		func() string { return "!tier" },
		func() string { return "site" },
	}
	var selector []string
	for range r.IntN(4) {
		selector = append(selector, terms[r.IntN(len(terms))]())
	}
	return strings.Join(selector, ",")
}

// The reader offers only the named Clusters that exist when a selector names some, every Cluster of the
// namespace otherwise: both must give the same answer, and an answer must never drop a matching Cluster
// nor be empty.
func TestChooseClustersProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 11))
	fleet := selectionFleet()
	var answered, refusedAbsent, refusedUnmatched, byNameOnly int
	for range 5000 {
		text := randomSelector(r)
		selector := parseSelector(t, text)
		chosen, err := chooseClusters(testNamespace, selector, fleet)

		var matching []string
		for i := range fleet {
			if selector.Matches(labelsOf(&fleet[i])) {
				matching = append(matching, fleet[i].Name)
			}
		}
		slices.Sort(matching)
		requested, named := namedClusters(selector)
		absent := slices.ContainsFunc(requested, func(name string) bool {
			return !slices.ContainsFunc(fleet, func(c operatorv1alpha1.Cluster) bool { return c.Name == name })
		})
		switch {
		case err != nil && !apierrors.IsNotFound(err):
			t.Fatalf("%q: error %v, want not found", text, err)
		case err != nil && len(matching) > 0 && !absent:
			t.Fatalf("%q: error %v although %v match and every named Cluster exists", text, err, matching)
		case err == nil && (len(chosen) == 0 || absent):
			t.Fatalf("%q: chose %v without error (absent named Cluster: %t)", text, names(chosen), absent)
		case err == nil && !slices.Equal(names(chosen), matching):
			t.Fatalf("%q: chose %v, want every matching Cluster %v", text, names(chosen), matching)
		case err == nil:
			answered++
		case absent:
			refusedAbsent++
		default:
			refusedUnmatched++
		}

		if named {
			var existing []operatorv1alpha1.Cluster
			for i := range fleet {
				if slices.Contains(requested, fleet[i].Name) {
					existing = append(existing, fleet[i])
				}
			}
			byNameOnly++
			byName, byNameErr := chooseClusters(testNamespace, selector, existing)
			if fmt.Sprint(byNameErr) != fmt.Sprint(err) || !slices.Equal(names(byName), names(chosen)) {
				t.Fatalf("%q: named Clusters only give %v (%v), the namespace gives %v (%v)",
					text, names(byName), byNameErr, names(chosen), err)
			}
		}
	}
	t.Logf("%d answered, %d refused for an absent named Cluster, %d refused for no match, %d read by name",
		answered, refusedAbsent, refusedUnmatched, byNameOnly)
	if answered == 0 || refusedAbsent == 0 || refusedUnmatched == 0 || byNameOnly == 0 {
		t.Error("the generated selectors miss a case")
	}
}
