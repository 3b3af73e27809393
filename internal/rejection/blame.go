package rejection

import (
	"sort"
	"strings"
)

// Object kinds that can be blamed.
const (
	KindOutput = "Output"
	KindInput  = "Input"
)

// Key names an Output or Input.
type Key struct {
	Kind, Name string
}

// Object is an Output or Input of the configuration every pod receives, with a fingerprint of how it was
// rendered for the collectors.
type Object struct {
	Key
	Fingerprint string
}

// Basis says why objects are blamed.
type Basis string

const (
	// Named: the collectors' error names them.
	Named Basis = "named in the collectors' error"
	// Changed: they changed since the collectors last accepted this part of the configuration.
	Changed Basis = "changed since the collectors last accepted the configuration"
	// Whole: nothing tells them apart: every Output and Input of the refused configuration is blamed.
	Whole Basis = "part of the refused configuration"
)

// Blame picks the objects a refused configuration is blamed on, sorted by kind and name: those whose name
// the collectors' error mentions; else those whose fingerprint differs from the one in accepted (what the
// collectors last took, nil when they never took any) or that accepted lacks; else every object.
func Blame(message string, objects []Object, accepted map[Key]string) ([]Object, Basis) {
	sorted := append([]Object(nil), objects...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Kind != sorted[j].Kind {
			return sorted[i].Kind < sorted[j].Kind
		}
		return sorted[i].Name < sorted[j].Name
	})
	var named, changed []Object
	for _, o := range sorted {
		if mentions(message, o.Name) {
			named = append(named, o)
		}
		if was, ok := accepted[o.Key]; !ok || was != o.Fingerprint {
			changed = append(changed, o)
		}
	}
	switch {
	case len(named) > 0:
		return named, Named
	case len(accepted) > 0 && len(changed) > 0:
		return changed, Changed
	default:
		return sorted, Whole
	}
}

// mentions tells whether name occurs in message as a word of its own: not as part of a longer name (output
// "file" is not mentioned by "filename").
func mentions(message, name string) bool {
	if name == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(message[from:], name)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(name)
		if (start == 0 || !nameByte(message[start-1])) && (end == len(message) || !nameByte(message[end])) {
			return true
		}
		from = start + 1
	}
}

// nameByte tells whether b can continue a Kubernetes object name. A dot is not counted: it ends sentences
// more often than it joins the parts of a name.
func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}
