package render

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// ErrSubscriptionNotFound: a Subscription a TunnelTargetPolicy names does not exist.
var ErrSubscriptionNotFound = errors.New("subscription not found")

// KindTunnelTargetPolicy names a TunnelTargetPolicy in a SkipError.
const KindTunnelTargetPolicy selection.Kind = "TunnelTargetPolicy"

// TunnelTargetMatches renders the policies of a Cluster as gNMIc's tunnel-target-matches, one per policy and
// named after it, with the subscriptions they run: the configuration every collector pod of the Cluster gets,
// whichever pod a device dials. Each match's target configuration comes from the policy's TargetProfile as a
// Target's does (credentials, TLS, timers, encoding, tags), with the policy's subscriptions and outputs;
// outputs must be among the Cluster's (outputs, its rendered outputs). A policy that does not render is left
// out with a SkipError; the others are unaffected. subscriptions are the Subscriptions of the namespace by name.
func TunnelTargetMatches(policies []*v1alpha1.TunnelTargetPolicy, subscriptions map[string]*v1alpha1.Subscription,
	outputs map[string]map[string]any, conn Connections) (gnmic.Config, []SkipError) {
	var out gnmic.Config
	var skips []SkipError
	for _, p := range policies {
		m, subs, err := tunnelTargetMatch(p, subscriptions, outputs, conn)
		if err != nil {
			skips = append(skips, SkipError{Kind: KindTunnelTargetPolicy, Name: p.Name, Err: err})
			continue
		}
		out.TunnelTargetMatches = setKey(out.TunnelTargetMatches, p.Name, m)
		for name, sc := range subs {
			out.Subscriptions = setKey(out.Subscriptions, name, sc)
		}
	}
	return out.Normalize(), skips
}

func tunnelTargetMatch(p *v1alpha1.TunnelTargetPolicy, subscriptions map[string]*v1alpha1.Subscription,
	outputs map[string]map[string]any, conn Connections) (gnmic.TunnelTargetMatch, map[string]gnmic.SubscriptionConfig, error) {
	profile := conn.Profiles[p.Spec.Profile]
	if profile == nil {
		return gnmic.TunnelTargetMatch{}, nil, fmt.Errorf("profile %q: %w", p.Spec.Profile, ErrProfileNotFound)
	}
	creds, err := credentialsOf(profile, conn.Secrets)
	if err != nil {
		return gnmic.TunnelTargetMatch{}, nil, fmt.Errorf("profile %q: %w", profile.Name, err)
	}
	subs := map[string]gnmic.SubscriptionConfig{}
	for _, name := range p.Spec.SubscriptionRefs {
		s := subscriptions[name]
		if s == nil {
			return gnmic.TunnelTargetMatch{}, nil, fmt.Errorf("subscription %q: %w", name, ErrSubscriptionNotFound)
		}
		sc, err := renderSubscription(s)
		if err != nil {
			return gnmic.TunnelTargetMatch{}, nil, fmt.Errorf("subscription %q: %w", name, err)
		}
		subs[name] = sc
	}
	for _, name := range p.Spec.OutputRefs {
		if _, ok := outputs[name]; !ok {
			return gnmic.TunnelTargetMatch{}, nil, fmt.Errorf("output %q: not among the Cluster's outputs", name)
		}
	}
	tc := gnmic.TargetConfig{
		Username:      creds.username,
		Password:      creds.password,
		Token:         creds.token,
		Timeout:       duration(profile.Spec.Timeout),
		RetryTimer:    duration(profile.Spec.RetryTimer),
		Encoding:      profile.Spec.Encoding,
		Gzip:          profile.Spec.Gzip,
		TCPKeepalive:  duration(profile.Spec.TCPKeepalive),
		GRPCKeepalive: grpcKeepalive(profile.Spec.GRPCKeepalive),
		Subscriptions: slices.Clone(p.Spec.SubscriptionRefs),
		Outputs:       slices.Clone(p.Spec.OutputRefs),
		EventTags:     eventTags(profile.Spec.Tags, nil, map[string]string{"tunnel-target-policy": p.Name}),
	}
	if err := applyTLS(&tc, profile, conn); err != nil {
		return gnmic.TunnelTargetMatch{}, nil, fmt.Errorf("profile %q: %w", profile.Name, err)
	}
	m := gnmic.TunnelTargetMatch{Type: p.Spec.Match.Type, ID: p.Spec.Match.ID, Config: tc}
	probe := gnmic.Config{Subscriptions: subs, Outputs: outputs, TunnelTargetMatches: map[string]gnmic.TunnelTargetMatch{p.Name: m}}
	if err := probe.Validate(); err != nil {
		return gnmic.TunnelTargetMatch{}, nil, fmt.Errorf("the collector would reject it: %w", err)
	}
	return m, subs, nil
}

// TunnelProfiles are the names of the TargetProfiles the policies use, for reading their Secrets.
func TunnelProfiles(policies []*v1alpha1.TunnelTargetPolicy) []string {
	var names []string
	for _, p := range policies {
		names = append(names, p.Spec.Profile)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
