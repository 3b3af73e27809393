// Command rulesfile prints the rule groups of a PrometheusRule manifest as a Prometheus rules file, the form
// promtool checks and unit-tests: `rulesfile config/prometheus/alerts.yaml > gnmic-operator.rules.yaml`.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// prometheusRule is the part of a monitoring.coreos.com/v1 PrometheusRule that Prometheus loads.
type prometheusRule struct {
	Kind string `json:"kind"`
	Spec struct {
		Groups []map[string]any `json:"groups"`
	} `json:"spec"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rulesfile PROMETHEUSRULE.yaml")
		os.Exit(2)
	}
	if err := printRules(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "rulesfile:", err)
		os.Exit(1)
	}
}

func printRules(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rule prometheusRule
	if err := yaml.Unmarshal(data, &rule); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if rule.Kind != "PrometheusRule" || len(rule.Spec.Groups) == 0 {
		return fmt.Errorf("%s is not a PrometheusRule with rule groups", path)
	}
	out, err := yaml.Marshal(map[string]any{"groups": rule.Spec.Groups})
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
