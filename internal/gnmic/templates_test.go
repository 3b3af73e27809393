package gnmic_test

import (
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

func TestUndefinedTemplateFunctions(t *testing.T) {
	for _, c := range []struct {
		name, text string
		undefined  []string
		parseError bool
	}{
		{"no actions", "telemetry", nil, false},
		{"gNMIc's default target template", `{{- if index . "subscription-target" -}}{{ index . "subscription-target" }}{{- else -}}{{ index . "source" }}{{- end -}}`, nil, false},
		{"every function gNMIc 0.46 keeps", `{{ toUpper (toLower (toTitle .a)) }} {{ split .b "," | join "-" }} {{ replace .c "a" "b" }} ` +
			`{{ trimPrefix .d "x" }} {{ trimSuffix .e "y" }} {{ pathBase .f }} {{ toJSON .g | fromJSON }} {{ toYAML .h | fromYAML }}`, nil, false},
		{"text/template builtins", `{{ if and (eq .a "b") (not .c) }}{{ printf "%s" (index . "d") }}{{ len .e }}{{ end }}`, nil, false},
		{"a gomplate namespace", `{{ strings.ToUpper .source }}`, []string{"strings"}, false},
		{"gomplate namespaces and a sprig-like name", `{{ data.ToJSON . }}{{ conv.ToString .x }}{{ strings.Trim .y " " }}{{ default "a" .z }}`,
			[]string{"conv", "data", "default", "strings"}, false},
		{"in a pipeline", `{{ .source | strings.TrimSpace | toLower }}`, []string{"strings"}, false},
		{"gomplate's top-level functions", `{{ base64.Encode .x }}{{ coll.Dict "a" 1 }}{{ tmpl.Exec "t" }}`,
			[]string{"base64", "coll", "tmpl"}, false},
		{"broken for any release", `{{ if .a }}`, nil, true},
		{"broken after a gomplate call", `{{ strings.ToUpper .a }}{{ end }}`, []string{"strings"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			undefined, err := gnmic.UndefinedTemplateFunctions(c.text)
			if (err != nil) != c.parseError {
				t.Fatalf("err = %v, want a parse error: %t", err, c.parseError)
			}
			if !slices.Equal(undefined, c.undefined) {
				t.Errorf("undefined = %q, want %q", undefined, c.undefined)
			}
		})
	}
}

func TestUndefinedTemplateFunctionsIsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString("{{ f")
		b.WriteString(strings.Repeat("x", i+1))
		b.WriteString(" }}")
	}
	undefined, err := gnmic.UndefinedTemplateFunctions(b.String())
	if err == nil || len(undefined) != 64 {
		t.Fatalf("got %d functions and err %v, want 64 and an error", len(undefined), err)
	}
}

// FuzzUndefinedTemplateFunctions: whatever the text, the functions found are ones gNMIc 0.46 lacks, and a
// template reported as parsing does parse once they are defined.
func FuzzUndefinedTemplateFunctions(f *testing.F) {
	for _, seed := range []string{"", "x", "{{ strings.ToUpper .a }}", "{{ toLower .a | data.JSON }}", "{{ if }}", "{{ template \"x\" }}",
		"{{ define \"a\" }}{{ coll.Has . \"b\" }}{{ end }}", "{{/* c */}}{{ $x := conv.Atoi .a }}{{ $x }}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		undefined, err := gnmic.UndefinedTemplateFunctions(text)
		funcs := template.FuncMap{}
		for _, name := range gnmic.TemplateFunctions {
			funcs[name] = func(...any) any { return nil }
		}
		for _, name := range undefined {
			if _, known := funcs[name]; known {
				t.Fatalf("%q reported undefined, but gNMIc defines it", name)
			}
			funcs[name] = func(...any) any { return nil }
		}
		if !slices.IsSorted(undefined) {
			t.Fatalf("not sorted: %q", undefined)
		}
		if _, perr := template.New("t").Funcs(funcs).Parse(text); (perr == nil) != (err == nil) {
			t.Fatalf("reported err %v, but with %q defined the template parses with err %v", err, undefined, perr)
		}
	})
}
