package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// setSecretValues sets, in the config object obj of an Output or Input, the
// value of each of refs from the Secret it names (Connections.Secrets), as a
// string. A key with dots is a path through nested objects, which are made
// when config has none. Errors name the reference, the Secret and its key,
// never a value.
func setSecretValues(obj map[string]any, refs []v1alpha1.ConfigSecretRef, secrets map[string]map[string][]byte) error {
	for _, ref := range refs {
		value, err := secretValue(ref, secrets)
		if err != nil {
			return err
		}
		if err := setPath(obj, strings.Split(ref.Key, "."), value); err != nil {
			return fmt.Errorf("spec.secretRefs[%s]: %w", ref.Key, err)
		}
	}
	return nil
}

// CheckSecretRefs tells whether every Secret and key refs name is in secrets: nil when they all are, else an
// error about the first that is not (ErrSecretNotFound or ErrSecretKeyMissing), naming it but no value.
func CheckSecretRefs(refs []v1alpha1.ConfigSecretRef, secrets map[string]map[string][]byte) error {
	for _, ref := range refs {
		if _, err := secretValue(ref, secrets); err != nil {
			return err
		}
	}
	return nil
}

// secretValue is the value ref takes from its Secret.
func secretValue(ref v1alpha1.ConfigSecretRef, secrets map[string]map[string][]byte) (string, error) {
	name, key := ref.SecretKeyRef.Name, ref.SecretKeyRef.Key
	data, ok := secrets[name]
	if !ok {
		return "", fmt.Errorf("spec.secretRefs[%s]: secret %q: %w", ref.Key, name, ErrSecretNotFound)
	}
	value, ok := data[key]
	if !ok {
		return "", fmt.Errorf("spec.secretRefs[%s]: secret %q: %w %q", ref.Key, name, ErrSecretKeyMissing, key)
	}
	return string(value), nil
}

// setPath sets obj[path[0]][path[1]]… to value, making the objects on the way
// that do not exist. obj is decoded afresh for every rendering, so it may be
// changed.
func setPath(obj map[string]any, path []string, value string) error {
	for i, key := range path[:len(path)-1] {
		next, exists := obj[key]
		if !exists || next == nil {
			made := map[string]any{}
			obj[key], obj = made, made
			continue
		}
		nested, isObject := next.(map[string]any)
		if !isObject {
			return fmt.Errorf("spec.config.%s: %w", strings.Join(path[:i+1], "."), ErrNotAnObject)
		}
		obj = nested
	}
	obj[path[len(path)-1]] = value
	return nil
}

// ConfigSecrets are the names of the Secrets the selected Outputs and Inputs
// take values from (spec.secretRefs), sorted and each once: the reconciler
// reads them with the targets' Secrets into Connections.Secrets.
func ConfigSecrets(sel selection.Selection) []string {
	var names []string
	for _, o := range sel.Outputs {
		names = appendSecretNames(names, o.Spec.SecretRefs)
	}
	for _, in := range sel.Inputs {
		if in.Input != nil {
			names = appendSecretNames(names, in.Input.Spec.SecretRefs)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func appendSecretNames(names []string, refs []v1alpha1.ConfigSecretRef) []string {
	for _, ref := range refs {
		names = append(names, ref.SecretKeyRef.Name)
	}
	return names
}

// UsesSecret tells whether refs take a value from the named Secret.
func UsesSecret(refs []v1alpha1.ConfigSecretRef, secret string) bool {
	return slices.ContainsFunc(refs, func(ref v1alpha1.ConfigSecretRef) bool { return ref.SecretKeyRef.Name == secret })
}
