package inventory

import (
	"fmt"
	"math"
)

// countOf is v, the value found at path, as a whole number.
func countOf(v any, found bool, path string) (int, error) {
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
