package targetmapping

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
)

// Mapping is what a TargetSource's spec.mapping says.
type Mapping struct {
	// Preset is netbox, httpSD, consul or empty.
	Preset string
	// Expressions set by the user; an empty one takes the preset's, then the default's.
	Expressions
	// DefaultProfile is the profile of a Target whose profile expression gives nothing. It is always allowed.
	DefaultProfile string
	// AllowedProfiles are the other profiles a record may have (profiles.go); a record with any other is
	// invalid.
	AllowedProfiles []string
	// DefaultPort is added to an address without a port (0: 57400).
	DefaultPort int
	// DefaultLabels are put on every Target; the mapped labels win.
	DefaultLabels map[string]string
}

// costLimit bounds the work of one expression on one record, so that a careless expression over a huge record
// fails that record instead of stalling the sync.
const costLimit = 1_000_000

// Mapper is a compiled Mapping.
type Mapper struct {
	m        Mapping
	programs map[string]cel.Program // by field: expand, include, name, address, profile, labels, tags
	allowed  allowedProfiles
}

// CompileError is an expression that does not compile.
type CompileError struct {
	// Field of spec.mapping: name, address, ...
	Field string
	// Expression as compiled (the preset's when the user set none).
	Expression string
	// Message of the CEL compiler.
	Message string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("mapping.%s %q: %s", e.Field, e.Expression, e.Message)
}

// Compile compiles the mapping's expressions. Its error joins a *CompileError per expression that does not
// compile.
func Compile(m Mapping) (*Mapper, error) {
	if m.Preset != "" {
		if _, ok := Presets[m.Preset]; !ok {
			return nil, &CompileError{Field: "preset", Expression: m.Preset, Message: "unknown preset: netbox, httpSD or consul"}
		}
	}
	if m.DefaultPort == 0 {
		m.DefaultPort = 57400
	}
	env, err := newEnv()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	e := resolved(m.Preset, m.Expressions)
	fields := []struct{ name, expr string }{
		{"expand", e.Expand}, {"include", e.Include}, {"name", e.Name}, {"address", e.Address},
		{"profile", e.Profile}, {"labels", e.Labels}, {"tags", e.Tags},
	}
	mapper := &Mapper{m: m, programs: map[string]cel.Program{}, allowed: newAllowedProfiles(m.AllowedProfiles, m.DefaultProfile)}
	var errs []error
	for _, f := range fields {
		if f.expr == "" {
			continue
		}
		ast, iss := env.Compile(f.expr)
		if iss.Err() != nil {
			errs = append(errs, &CompileError{Field: f.name, Expression: f.expr, Message: strings.TrimSpace(iss.Err().Error())})
			continue
		}
		prg, err := env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(100))
		if err != nil {
			errs = append(errs, &CompileError{Field: f.name, Expression: f.expr, Message: err.Error()})
			continue
		}
		mapper.programs[f.name] = prg
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return mapper, nil
}

// newEnv is the CEL environment of every expression: the variable record, the strings, lists and two-variable
// comprehension extensions, and targetName.
func newEnv() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("record", cel.DynType),
		ext.Strings(),
		ext.Lists(),
		ext.TwoVarComprehensions(),
		cel.OptionalTypes(),
		cel.Function("targetName",
			cel.Overload("targetName_string", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					s, ok := v.(types.String)
					if !ok {
						return types.NewErr("targetName needs a string, got %s", v.Type())
					}
					return types.String(TargetName(string(s)))
				}))),
	)
}

// TargetName makes s a Kubernetes object name (a DNS subdomain): lowercase, every run of characters other than
// a-z and 0-9 within a dot-separated part replaced by one '-', parts that end up empty dropped, no '-' at either
// end of a part, at most 253 characters. "Leaf 1/DC1" gives "leaf-1-dc1", "10.0.0.1:57400" gives
// "10.0.0.1-57400". It gives "" when s has no letter or digit.
func TargetName(s string) string {
	var parts []string
	for _, part := range strings.Split(strings.ToLower(s), ".") {
		var b strings.Builder
		dash := false
		for _, r := range part {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				b.WriteRune(r)
				dash = false
				continue
			}
			if !dash {
				b.WriteByte('-')
				dash = true
			}
		}
		if p := strings.Trim(b.String(), "-"); p != "" {
			parts = append(parts, p)
		}
	}
	name := strings.Join(parts, ".")
	if len(name) > 253 {
		name = strings.TrimRight(name[:253], "-.")
	}
	return name
}
