package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// outputObject is the collector's view of o: its spec.config with the values
// of its spec.secretRefs from secrets, and type and name set by the operator.
func outputObject(o *v1alpha1.Output, secrets map[string]map[string][]byte) (map[string]any, error) {
	obj, err := configObject(o.Spec.Config)
	if err != nil {
		return nil, err
	}
	if err := setSecretValues(obj, o.Spec.SecretRefs, secrets); err != nil {
		return nil, err
	}
	obj["type"] = o.Spec.Type
	obj["name"] = o.Name
	return obj, nil
}

// inputObject is the collector's view of in: its spec.config with the values
// of its spec.secretRefs from secrets, and type, name and the outputs it feeds
// set by the operator.
func inputObject(in *v1alpha1.Input, outputs []string, secrets map[string]map[string][]byte) (map[string]any, error) {
	obj, err := configObject(in.Spec.Config)
	if err != nil {
		return nil, err
	}
	if err := setSecretValues(obj, in.Spec.SecretRefs, secrets); err != nil {
		return nil, err
	}
	obj["type"] = in.Spec.Type
	obj["name"] = in.Name
	obj["outputs"] = outputs
	return obj, nil
}

// configObject decodes a pass-through spec.config, one key at a time; an
// empty value is null. Numbers stay json.Number so that they reach the
// collector exactly as written. Errors name the key but do not quote the
// decoder's message, which may show part of the value (configs hold
// passwords).
func configObject(config map[string]apiextensionsv1.JSON) (map[string]any, error) {
	obj := make(map[string]any, len(config)+3)
	for key, value := range config {
		v, err := jsonValue(value.Raw)
		if err != nil {
			return nil, fmt.Errorf("spec.config.%s: %w", key, err)
		}
		obj[key] = v
	}
	return obj, nil
}

func jsonValue(raw []byte) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, ErrInvalidJSON
	}
	return v, nil
}
