package gnmic

import (
	"fmt"
	"regexp"
	"slices"
	"text/template"
)

// TemplateKeys are the keys of an output's configuration whose values gNMIc parses as Go text/templates
// (the target-template and msg-template fields of pkg/outputs at v0.47.0).
var TemplateKeys = []string{"msg-template", "target-template"}

// GomplateRemovedIn is the gNMIc release that dropped gomplate (commit 8a5b881c, "remove gomplate
// dependency"): from it on, a template may call text/template's builtins and TemplateFunctions only.
var GomplateRemovedIn = mustRelease("0.46.0")

// TemplateFunctions are the functions gNMIc's own template engine gives templates from GomplateRemovedIn on
// (pkg/gtemplate/template_funcs.go at v0.46.0 and v0.47.0), in place of gomplate's hundreds.
var TemplateFunctions = []string{"fromJSON", "toJSON", "fromYAML", "toYAML", "split", "join", "replace",
	"trimPrefix", "trimSuffix", "toTitle", "toLower", "toUpper", "pathBase"}

// maxUndefinedFunctions bounds the parses of one template: each finds one more undefined function.
const maxUndefinedFunctions = 64

var undefinedFunction = regexp.MustCompile(`function "([^"]+)" not defined`)

// UndefinedTemplateFunctions are the functions, sorted, that a template calls and gNMIc GomplateRemovedIn or
// newer does not define: gomplate's (strings, data, conv, …) and any other name. A collector of those
// releases refuses the template at parse time; an older one, with gomplate, may accept it. err is set when
// the template does not parse for another reason (any gNMIc refuses it); the functions found before are
// returned with it.
func UndefinedTemplateFunctions(text string) ([]string, error) {
	funcs := template.FuncMap{}
	for _, name := range TemplateFunctions {
		funcs[name] = stubFunction
	}
	var undefined []string
	for range maxUndefinedFunctions {
		_, err := template.New("template").Funcs(funcs).Parse(text)
		if err == nil {
			slices.Sort(undefined)
			return undefined, nil
		}
		m := undefinedFunction.FindStringSubmatch(err.Error())
		if m == nil {
			slices.Sort(undefined)
			return undefined, fmt.Errorf("parse: %w", err)
		}
		if _, defined := funcs[m[1]]; defined {
			// A name text/template itself reports undefined: nothing more can be learnt.
			slices.Sort(undefined)
			return undefined, fmt.Errorf("parse: %w", err)
		}
		undefined = append(undefined, m[1])
		funcs[m[1]] = stubFunction
	}
	slices.Sort(undefined)
	return undefined, fmt.Errorf("the template calls more than %d undefined functions", maxUndefinedFunctions)
}

// stubFunction stands for a function while a template is only parsed: text/template checks names, not
// arguments, at parse time.
func stubFunction(...any) any { return nil }
