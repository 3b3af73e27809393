// Command helmchart generates the Helm chart of the operator (charts/gnmic-operator) from config/: it takes
// `kustomize build config/default`, the install `make deploy` applies, and writes each object as a template
// of its own, with the values of values.go substituted where the chart lets users choose (image, replicas,
// resources, watched namespaces, sharding, the metrics API, CRDs, scheduling). Optional components (the
// operator's ServiceMonitor and PrometheusRule) come from the kustomize directories named with -optional
// and are rendered only when their value is on. `make helm-chart` runs it; `make verify` fails when the
// committed chart differs from what it generates. docs/development.md explains why a generator of our own.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// optionalDirs collects the repeated -optional flag.
type optionalDirs []string

func (o *optionalDirs) String() string       { return strings.Join(*o, ",") }
func (o *optionalDirs) Set(dir string) error { *o = append(*o, dir); return nil }

func main() {
	var opts options
	var optional optionalDirs
	flag.StringVar(&opts.kustomize, "kustomize", "bin/kustomize", "kustomize binary")
	flag.StringVar(&opts.source, "source", "config/default", "kustomize directory of the install")
	flag.Var(&optional, "optional", "kustomize directory of optional components (repeatable): ServiceMonitor, PrometheusRule")
	flag.StringVar(&opts.out, "out", "charts/gnmic-operator", "chart directory to (re)write")
	flag.StringVar(&opts.version, "version", "0.1.0", "chart version and appVersion")
	flag.StringVar(&opts.docs, "docs", "docs/helm.md", "Markdown file whose values table (between the helm-values markers) is rewritten; empty: none")
	flag.Parse()
	opts.optional = optional
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "helmchart:", err)
		os.Exit(1)
	}
}

type options struct {
	kustomize string
	source    string
	optional  []string
	out       string
	version   string
	docs      string
}

func run(opts options) error {
	install, err := kustomizeBuild(opts.kustomize, opts.source)
	if err != nil {
		return err
	}
	var optional [][]byte
	for _, dir := range opts.optional {
		built, err := kustomizeBuild(opts.kustomize, dir)
		if err != nil {
			return err
		}
		optional = append(optional, built)
	}
	chart, err := generate(install, optional, opts.version)
	if err != nil {
		return err
	}
	if err := chart.write(opts.out); err != nil {
		return err
	}
	if opts.docs != "" {
		return rewriteValuesTable(opts.docs, chart.values)
	}
	return nil
}
