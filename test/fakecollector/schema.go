package fakecollector

import (
	"fmt"
	"math"
	"time"
)

// fieldType is how gNMIc's Go types decode one field of a target or a
// subscription: strictly, so that a value of the wrong JSON type is an error
// (mapstructure without weak typing).
type fieldType int

const (
	textField fieldType = iota
	boolField
	durationField
	uintField
	listField
	stringMapField
	subscriptionListField
	keepaliveField
	historyField
)

// schema maps the keys gNMIc knows for a kind to their types. A nil schema
// takes the object as it is (outputs, inputs, processors are free-form).
type schema map[string]fieldType

var targetSchema = schema{
	"name": textField, "address": textField, "username": textField, "password": textField,
	"token": textField, "auth-scheme": textField, "timeout": durationField, "retry-timer": durationField,
	"insecure": boolField, "skip-verify": boolField, "tls-ca": textField, "tls-cert": textField,
	"tls-key": textField, "tls-server-name": textField, "tls-min-version": textField,
	"tls-max-version": textField, "tls-version": textField, "cipher-suites": listField,
	"encoding": textField, "gzip": boolField, "proxy": textField, "subscriptions": listField,
	"outputs": listField, "tags": listField, "event-tags": stringMapField, "metadata": stringMapField,
	"buffer-size": uintField, "tcp-keepalive": durationField, "grpc-keepalive": keepaliveField,
	"proto-files": listField, "proto-dirs": listField, "log-tls-secret": boolField,
}

var subscriptionSchema = schema{
	"name": textField, "models": listField, "prefix": textField, "target": textField,
	"set-target": boolField, "paths": listField, "mode": textField, "stream-mode": textField,
	"encoding": textField, "qos": uintField, "sample-interval": durationField,
	"heartbeat-interval": durationField, "suppress-redundant": boolField, "updates-only": boolField,
	"history": historyField, "stream-subscriptions": subscriptionListField, "outputs": listField,
	"depth": uintField,
}

var schemas = map[string]schema{kindTargets: targetSchema, kindSubscriptions: subscriptionSchema}

func (s schema) decode(path string, obj map[string]any) (map[string]any, error) {
	if s == nil {
		return deepCopy(obj).(map[string]any), nil
	}
	out := make(map[string]any, len(obj))
	for _, key := range sortedKeys(obj) {
		ft, known := s[key]
		if !known || obj[key] == nil {
			continue
		}
		v, err := ft.decode(path+"."+key, obj[key])
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// decode converts one JSON value; errors name the field and the types, never
// the value (it may be a password).
func (ft fieldType) decode(path string, v any) (any, error) {
	mismatch := func(want string) error {
		return fmt.Errorf("'%s' expected type '%s', got unconvertible type '%s'", path, want, jsonType(v))
	}
	switch ft {
	case textField:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, mismatch("string")
	case boolField:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, mismatch("bool")
	case durationField:
		return decodeDuration(path, v)
	case uintField:
		if f, ok := v.(float64); ok && f >= 0 && f <= math.MaxUint32 {
			return uint64(f), nil
		}
		return nil, mismatch("uint")
	case listField:
		return decodeList(path, v)
	case stringMapField:
		return decodeStringMap(path, v)
	case subscriptionListField:
		items, ok := v.([]any)
		if !ok {
			return nil, mismatch("slice")
		}
		out := make([]any, len(items))
		for i, item := range items {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("'%s[%d]' expected a map, got '%s'", path, i, jsonType(item))
			}
			sub, err := subscriptionSchema.decode(fmt.Sprintf("%s[%d]", path, i), m)
			if err != nil {
				return nil, err
			}
			out[i] = sub
		}
		return out, nil
	case keepaliveField:
		return decodeKeepalive(path, v)
	case historyField:
		return decodeHistory(path, v)
	}
	return nil, fmt.Errorf("'%s': unknown field type", path)
}

// decodeDuration accepts "10s"-style strings and bare numbers, which gNMIc
// takes as nanoseconds.
func decodeDuration(path string, v any) (any, error) {
	switch v := v.(type) {
	case string:
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("error decoding '%s': invalid duration", path)
		}
		return int64(d), nil
	case float64:
		return int64(v), nil
	}
	return nil, fmt.Errorf("'%s' expected type 'time.Duration', got unconvertible type '%s'", path, jsonType(v))
}

func decodeList(path string, v any) (any, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("'%s': source data must be an array or slice, got %s", path, jsonType(v))
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("'%s[%d]' expected type 'string', got unconvertible type '%s'", path, i, jsonType(item))
		}
		out[i] = s
	}
	return out, nil
}

func decodeStringMap(path string, v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("'%s' expected a map, got '%s'", path, jsonType(v))
	}
	out := make(map[string]string, len(m))
	for k, item := range m {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("'%s[%s]' expected type 'string', got unconvertible type '%s'", path, k, jsonType(item))
		}
		out[k] = s
	}
	return out, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case float64:
		return "float64"
	case []any:
		return "slice"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}
