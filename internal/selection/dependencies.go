package selection

import (
	"slices"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// ProfilesOf returns the sorted, distinct names of the TargetProfiles that the
// selected targets name: the profiles a reconciler reads to render them.
func ProfilesOf(sel Selection) []string {
	var names []string
	for _, t := range sel.Targets {
		names = append(names, t.Target.Spec.Profile)
	}
	return sortedDistinct(names)
}

// SecretsOf returns the sorted, distinct names of the Secrets the selected
// targets need through their profiles: credentials and TLS. profiles is keyed
// by name; a missing profile contributes nothing (rendering reports it).
func SecretsOf(sel Selection, profiles map[string]*v1alpha1.TargetProfile) []string {
	return SecretsOfProfiles(ProfilesOf(sel), profiles)
}

// SecretsOfProfiles is SecretsOf for the targets' profiles as ProfilesOf gives them.
func SecretsOfProfiles(used []string, profiles map[string]*v1alpha1.TargetProfile) []string {
	var names []string
	for _, name := range used {
		if p := profiles[name]; p != nil {
			names = append(names, SecretsOfProfile(p)...)
		}
	}
	return sortedDistinct(names)
}

// TLSSecretsOf returns the sorted, distinct names of the tls.secretRef Secrets
// of the selected targets' profiles: the Secrets whose files the Cluster's
// target TLS Secret carries to every collector pod, since any target may be
// placed on any pod (render.BundleTLS).
func TLSSecretsOf(sel Selection, profiles map[string]*v1alpha1.TargetProfile) []string {
	return TLSSecretsOfProfiles(ProfilesOf(sel), profiles)
}

// TLSSecretsOfProfiles is TLSSecretsOf for the targets' profiles as ProfilesOf gives them.
func TLSSecretsOfProfiles(used []string, profiles map[string]*v1alpha1.TargetProfile) []string {
	var names []string
	for _, name := range used {
		if p := profiles[name]; p != nil && p.Spec.TLS != nil {
			names = append(names, p.Spec.TLS.SecretRef)
		}
	}
	return sortedDistinct(names)
}

// SecretsOfProfile returns the sorted names of the Secrets p references: its
// credentialsRef and its tls.secretRef.
func SecretsOfProfile(p *v1alpha1.TargetProfile) []string {
	names := []string{p.Spec.CredentialsRef}
	if p.Spec.TLS != nil {
		names = append(names, p.Spec.TLS.SecretRef)
	}
	return sortedDistinct(names)
}

// ProfilesUsingSecret returns the sorted names of the profiles that reference
// the Secret called secret: with ClustersUsingProfile, the Clusters to
// reconcile when a Secret changes.
func ProfilesUsingSecret(secret string, profiles []v1alpha1.TargetProfile) []string {
	var names []string
	for i := range profiles {
		if slices.Contains(SecretsOfProfile(&profiles[i]), secret) {
			names = append(names, profiles[i].Name)
		}
	}
	return sortedDistinct(names)
}

// sortedDistinct sorts names, drops duplicates and empty names, and returns
// nil when nothing is left.
func sortedDistinct(names []string) []string {
	names = slices.DeleteFunc(names, func(n string) bool { return n == "" })
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return slices.Compact(names)
}
