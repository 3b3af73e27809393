package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// decodeObject calls member for each member of the JSON object value, in
// order. Unlike encoding/json's struct decoding it matches names exactly
// (so "podcapacity" is not "podCapacity") and rejects a member given twice.
// value must be valid JSON.
func decodeObject(path string, value json.RawMessage, member func(name string, value json.RawMessage) error) error {
	if kind := kindOf(value); kind != "object" {
		return fmt.Errorf("%s: must be an object, got %s", path, kind)
	}
	dec := json.NewDecoder(bytes.NewReader(value))
	if _, err := dec.Token(); err != nil { // the opening brace
		return fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for dec.More() {
		token, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		name, _ := token.(string) // object keys are always strings
		if seen[name] {
			return fmt.Errorf("%s: member %q given twice", path, name)
		}
		seen[name] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := member(name, v); err != nil {
			return err
		}
	}
	return nil
}

// decodeInt reads a JSON number that is an integer from lo to hi. Numbers
// with a fraction or an exponent are rejected even when whole (2.0, 1e3),
// as they are in Kubernetes integer fields.
func decodeInt(path string, value json.RawMessage, lo, hi int) (int, error) {
	if kind := kindOf(value); kind != "number" {
		return 0, fmt.Errorf("%s: must be an integer from %d to %s, got %s", path, lo, bound(hi), kind)
	}
	n, err := strconv.Atoi(string(value))
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s: must be an integer from %d to %s, got %s", path, lo, bound(hi), value)
	}
	return n, nil
}

func bound(hi int) string {
	if hi == int(^uint(0)>>1) {
		return "any size"
	}
	return strconv.Itoa(hi)
}

// kindOf names the kind of a valid JSON value for messages.
func kindOf(value json.RawMessage) string {
	value = bytes.TrimLeft(value, " \t\r\n")
	if len(value) == 0 {
		return "nothing"
	}
	switch value[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// limitedReader fails with errTooLarge once more than limit bytes were
// read. It marks failures of the underlying reader as read errors, so that
// they are not mistaken for bad input.
type limitedReader struct {
	r     io.Reader
	limit int64
	read  int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if left := l.limit + 1 - l.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	if l.read > l.limit {
		return n, errTooLarge
	}
	if err != nil && err != io.EOF {
		err = &readError{err: err}
	}
	return n, err
}
