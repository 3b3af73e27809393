package fakecollector

import "fmt"

// keepaliveFields are the mapstructure keys of gNMIc's gRPC client keepalive
// (pkg/api/types/target.go, clientKeepalive: `time`, `timeout`,
// `permit-without-stream`), in its field order, with the Go field names the
// struct is stored and returned under: it has no JSON tags.
var keepaliveFields = []struct {
	key, goName string
	typ         fieldType
}{
	{"time", "Time", durationField},
	{"timeout", "Timeout", durationField},
	{"permit-without-stream", "PermitWithoutStream", boolField},
}

// decodeKeepalive decodes a target's grpc-keepalive into the form gNMIc
// stores and returns: {"Time": ns, "Timeout": ns, "PermitWithoutStream": b},
// every field present, zero when not sent. Unknown keys are ignored.
func decodeKeepalive(path string, v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("'%s' expected a map, got '%s'", path, jsonType(v))
	}
	out := map[string]any{"Time": int64(0), "Timeout": int64(0), "PermitWithoutStream": false}
	for _, f := range keepaliveFields {
		item, ok := m[f.key]
		if !ok || item == nil {
			continue
		}
		decoded, err := f.typ.decode(path+"."+f.key, item)
		if err != nil {
			return nil, err
		}
		out[f.goName] = decoded
	}
	return out, nil
}

// historyFields are the fields of gNMIc's subscription history, in its field
// order. Each is a Go time.Time.
var historyFields = []string{"snapshot", "start", "end"}

// decodeHistory refuses what gNMIc's apply decoder refuses: it has no hook
// for time.Time, so it wants a map for each history time and no JSON value a
// time can be written as (an RFC 3339 string, a number) is accepted. A
// history that holds no time ({}, or times given as objects) decodes to zero
// times in gNMIc too, and is kept as sent.
func decodeHistory(path string, v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("'%s' expected a map, got '%s'", path, jsonType(v))
	}
	for _, field := range historyFields {
		item, ok := m[field]
		if !ok || item == nil {
			continue
		}
		if _, ok := item.(map[string]any); !ok {
			return nil, fmt.Errorf("'%s.%s' expected a map, got '%s'", path, field, jsonType(item))
		}
	}
	return deepCopy(m), nil
}
