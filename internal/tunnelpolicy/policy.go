package tunnelpolicy

import (
	"fmt"
	"regexp"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// Selects tells whether the policy applies to the Cluster named cluster with clusterLabels: the Cluster is
// one of spec.clusterRefs or matches spec.clusterSelector. A selector that does not parse selects nothing
// (Check reports it).
func Selects(p *v1alpha1.TunnelTargetPolicy, cluster string, clusterLabels map[string]string) bool {
	if slices.Contains(p.Spec.ClusterRefs, cluster) {
		return true
	}
	if p.Spec.ClusterSelector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(p.Spec.ClusterSelector)
	return err == nil && sel.Matches(labels.Set(clusterLabels))
}

// Problem is why a policy cannot be rendered: a reason of its Ready condition and a message for users.
type Problem struct {
	Reason  string
	Message string
}

// Check finds what keeps the policy from being rendered in any Cluster: a match expression or a cluster
// selector that does not parse, a TargetProfile or a Subscription that does not exist (profiles and
// subscriptions are the names that exist in the policy's namespace). nil means it renders.
func Check(p *v1alpha1.TunnelTargetPolicy, profiles, subscriptions map[string]bool) *Problem {
	for _, e := range []struct{ field, expr string }{{"spec.match.type", p.Spec.Match.Type}, {"spec.match.id", p.Spec.Match.ID}} {
		if _, err := regexp.Compile(e.expr); err != nil {
			return &Problem{v1alpha1.ReasonInvalidMatch, fmt.Sprintf("%s is not an RE2 regular expression: %v", e.field, err)}
		}
	}
	if s := p.Spec.ClusterSelector; s != nil {
		if _, err := metav1.LabelSelectorAsSelector(s); err != nil {
			return &Problem{v1alpha1.ReasonInvalidMatch, fmt.Sprintf("spec.clusterSelector: %v", err)}
		}
	}
	if !profiles[p.Spec.Profile] {
		return &Problem{v1alpha1.ReasonProfileNotFound, fmt.Sprintf("TargetProfile %q not found", p.Spec.Profile)}
	}
	for _, s := range p.Spec.SubscriptionRefs {
		if !subscriptions[s] {
			return &Problem{v1alpha1.ReasonSubscriptionNotFound, fmt.Sprintf("Subscription %q not found", s)}
		}
	}
	return nil
}

// CheckSecrets finds a Secret the policy's profile names (credentials, TLS) that does not exist; secrets are the
// names of the Secrets of the namespace. nil when they all do, or the profile is nil.
func CheckSecrets(profile *v1alpha1.TargetProfile, secrets map[string]bool) *Problem {
	if profile == nil {
		return nil
	}
	refs := []string{profile.Spec.CredentialsRef}
	if profile.Spec.TLS != nil {
		refs = append(refs, profile.Spec.TLS.SecretRef)
	}
	for _, ref := range refs {
		if ref != "" && !secrets[ref] {
			return &Problem{v1alpha1.ReasonSecretNotFound, fmt.Sprintf("Secret %q of TargetProfile %q not found", ref, profile.Name)}
		}
	}
	return nil
}

// MatchedBy is the name of the rule of matches that the collector applies to a device registering with typ
// and id: the first by name among those that match, as gNMIc sorts them; "" when none does.
func MatchedBy(matches map[string]gnmic.TunnelTargetMatch, typ, id string) string {
	names := make([]string, 0, len(matches))
	for name := range matches {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if matches[name].Matches(typ, id) {
			return name
		}
	}
	return ""
}
