package inventory

import (
	"fmt"
	"math"
	"strings"
)

// lookup follows a dotted path of object fields ("results", "links.next") through a decoded JSON document.
func lookup(doc any, path string) (any, bool) {
	v := doc
	for _, field := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[field]; !ok {
			return nil, false
		}
	}
	return v, true
}

// recordsOf is the list of records of a page: the list at path, or the page itself when path is empty. Every
// record must be a JSON object.
func recordsOf(page any, path string) ([]Record, error) {
	v := page
	if path != "" {
		var found bool
		if v, found = lookup(page, path); !found {
			return nil, fmt.Errorf("no %s in the page", path)
		}
	}
	list, ok := v.([]any)
	if !ok {
		where := "the page"
		if path != "" {
			where = path
		}
		return nil, fmt.Errorf("%s is %s, not a list of records", where, jsonKind(v))
	}
	records := make([]Record, 0, len(list))
	for i, item := range list {
		r, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("record %d is %s, not an object", i, jsonKind(item))
		}
		records = append(records, r)
	}
	return records, nil
}

// countOf is the whole number at path.
func countOf(page any, path string) (int, error) {
	v, found := lookup(page, path)
	if !found {
		return 0, fmt.Errorf("no %s in the page", path)
	}
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, fmt.Errorf("%s is %v, not a count", path, v)
	}
	return int(f), nil
}

// jsonKind names the JSON type of a decoded value, with its article: "an object", "null".
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
