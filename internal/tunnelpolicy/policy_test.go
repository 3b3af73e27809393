package tunnelpolicy

import (
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

func TestSelects(t *testing.T) {
	tests := []struct {
		name string
		spec v1alpha1.TunnelTargetPolicySpec
		want bool
	}{
		{"a Cluster named in clusterRefs", v1alpha1.TunnelTargetPolicySpec{ClusterRefs: []string{"other", "edge"}}, true},
		{"no other Cluster", v1alpha1.TunnelTargetPolicySpec{ClusterRefs: []string{"other"}}, false},
		{"a Cluster whose labels match the selector", v1alpha1.TunnelTargetPolicySpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "edge"}}}, true},
		{"not one whose labels do not", v1alpha1.TunnelTargetPolicySpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "core"}}}, false},
		{"every Cluster with an empty selector", v1alpha1.TunnelTargetPolicySpec{ClusterSelector: &metav1.LabelSelector{}}, true},
		{"none with a selector that does not parse", v1alpha1.TunnelTargetPolicySpec{ClusterSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}}, false},
	}
	for _, tt := range tests {
		p := &v1alpha1.TunnelTargetPolicy{Spec: tt.spec}
		if got := Selects(p, "edge", map[string]string{"tier": "edge"}); got != tt.want {
			t.Errorf("%s: Selects = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	profiles, subs := map[string]bool{"routers": true}, map[string]bool{"counters": true}
	valid := func() v1alpha1.TunnelTargetPolicySpec {
		return v1alpha1.TunnelTargetPolicySpec{Match: v1alpha1.TunnelTargetMatch{Type: "^GNMI_GNOI$", ID: "^leaf-[0-9]+$"},
			Profile: "routers", SubscriptionRefs: []string{"counters"}}
	}
	tests := []struct {
		name       string
		change     func(*v1alpha1.TunnelTargetPolicySpec)
		wantReason string
		wantIn     string
	}{
		{"renders", func(*v1alpha1.TunnelTargetPolicySpec) {}, "", ""},
		{"empty expressions match everything", func(s *v1alpha1.TunnelTargetPolicySpec) { s.Match = v1alpha1.TunnelTargetMatch{} }, "", ""},
		{"an ID that is not RE2", func(s *v1alpha1.TunnelTargetPolicySpec) { s.Match.ID = "leaf-(" }, v1alpha1.ReasonInvalidMatch, "spec.match.id"},
		{"a type with a Perl lookahead RE2 lacks", func(s *v1alpha1.TunnelTargetPolicySpec) { s.Match.Type = "(?!GNOI)" }, v1alpha1.ReasonInvalidMatch, "spec.match.type"},
		{"a selector that does not parse", func(s *v1alpha1.TunnelTargetPolicySpec) {
			s.ClusterSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		}, v1alpha1.ReasonInvalidMatch, "spec.clusterSelector"},
		{"a missing profile", func(s *v1alpha1.TunnelTargetPolicySpec) { s.Profile = "absent" }, v1alpha1.ReasonProfileNotFound, `"absent"`},
		{"a missing subscription", func(s *v1alpha1.TunnelTargetPolicySpec) { s.SubscriptionRefs = append(s.SubscriptionRefs, "gone") },
			v1alpha1.ReasonSubscriptionNotFound, `"gone"`},
	}
	for _, tt := range tests {
		spec := valid()
		tt.change(&spec)
		problem := Check(&v1alpha1.TunnelTargetPolicy{Spec: spec}, profiles, subs)
		switch {
		case tt.wantReason == "" && problem != nil:
			t.Errorf("%s: %+v, want none", tt.name, problem)
		case tt.wantReason != "" && (problem == nil || problem.Reason != tt.wantReason || !strings.Contains(problem.Message, tt.wantIn)):
			t.Errorf("%s: %+v, want %s mentioning %s", tt.name, problem, tt.wantReason, tt.wantIn)
		}
	}
}

func TestMatchedByIsTheFirstMatchingRuleByNameAsGNMIcPicksIt(t *testing.T) {
	matches := map[string]gnmic.TunnelTargetMatch{
		"b-leaves": {Type: "GNMI", ID: "^leaf-"},
		"a-lab":    {ID: "-lab$"},
		"z-any":    {},
		"c-broken": {ID: "("},
	}
	tests := []struct{ typ, id, want string }{
		{"GNMI_GNOI", "leaf-1", "b-leaves"},
		{"GNMI_GNOI", "leaf-1-lab", "a-lab"},
		{"GNOI", "leaf-1", "z-any"}, // the type does not match b-leaves; a rule that does not compile matches nothing
		{"", "", "z-any"},
	}
	for _, tt := range tests {
		if got := MatchedBy(matches, tt.typ, tt.id); got != tt.want {
			t.Errorf("MatchedBy(%q, %q) = %q, want %q", tt.typ, tt.id, got, tt.want)
		}
	}
	if got := MatchedBy(map[string]gnmic.TunnelTargetMatch{"x": {ID: "^spine"}}, "GNMI", "leaf"); got != "" {
		t.Errorf("MatchedBy with no matching rule = %q, want none", got)
	}
}

func FuzzMatchedByNamesAMatchingRuleBeforeWhichNoneMatches(f *testing.F) {
	f.Add("GNMI_GNOI", "leaf-1", "^leaf", "GNMI", "-1$", "")
	f.Add("", "x", "(", "", "x", "y")
	f.Fuzz(func(t *testing.T, typ, id, id1, type1, id2, type2 string) {
		matches := map[string]gnmic.TunnelTargetMatch{"m1": {ID: id1, Type: type1}, "m2": {ID: id2, Type: type2}, "m0": {ID: "^$", Type: "^$"}}
		got := MatchedBy(matches, typ, id)
		names := []string{"m0", "m1", "m2"}
		sort.Strings(names)
		for _, name := range names {
			if name == got {
				if !matches[name].Matches(typ, id) {
					t.Fatalf("MatchedBy = %s, which does not match (%q, %q)", got, typ, id)
				}
				return
			}
			if matches[name].Matches(typ, id) {
				t.Fatalf("MatchedBy = %q, but %s matches (%q, %q) and sorts first", got, name, typ, id)
			}
		}
		if got != "" {
			t.Fatalf("MatchedBy = %q, not a rule", got)
		}
	})
}

func TestCheckSecretsNamesTheFirstMissingSecretOfTheProfile(t *testing.T) {
	p := &v1alpha1.TargetProfile{Spec: v1alpha1.TargetProfileSpec{CredentialsRef: "creds", TLS: &v1alpha1.TargetTLS{SecretRef: "ca"}}}
	p.Name = "routers"
	if problem := CheckSecrets(p, map[string]bool{"creds": true, "ca": true}); problem != nil {
		t.Errorf("both Secrets exist: %+v", problem)
	}
	problem := CheckSecrets(p, map[string]bool{"creds": true})
	if problem == nil || problem.Reason != v1alpha1.ReasonSecretNotFound || !strings.Contains(problem.Message, `"ca"`) {
		t.Errorf("missing TLS Secret: %+v", problem)
	}
	if CheckSecrets(nil, nil) != nil || CheckSecrets(&v1alpha1.TargetProfile{}, nil) != nil {
		t.Error("no profile, or one that names no Secret, lacks nothing")
	}
}
