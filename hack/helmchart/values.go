package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// value is one setting of values.yaml: its dotted key, its default and what it does. The defaults of the
// image, replicas and resources are config/manager's, so that the chart with its defaults installs what
// `make deploy` installs.
type value struct {
	key string
	def any
	doc string
}

func chartValues(deployment *unstructured.Unstructured) ([]value, error) {
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		return nil, fmt.Errorf("Deployment %s has %d containers, the chart knows one", deployment.GetName(), len(containers))
	}
	container, _ := containers[0].(map[string]any)
	image, _ := container["image"].(string)
	colon := strings.LastIndex(image, ":")
	if colon < 0 || strings.Contains(image[colon:], "/") {
		return nil, fmt.Errorf("Deployment %s: image %q has no tag (make deploy sets one with kustomize edit set image)", deployment.GetName(), image)
	}
	// Decoded from YAML through JSON: numbers are float64.
	replicas, ok := deployment.Object["spec"].(map[string]any)["replicas"].(float64)
	if !ok || replicas != float64(int64(replicas)) {
		return nil, fmt.Errorf("Deployment %s: spec.replicas is not a whole number", deployment.GetName())
	}
	resources, _ := container["resources"].(map[string]any)
	return []value{
		{"image.repository", image[:colon], "Repository of the operator's image."},
		{"image.tag", image[colon+1:], "Tag of the operator's image."},
		{"image.pullPolicy", "IfNotPresent", "Pull policy of the operator's image."},
		{"replicas", int64(replicas), "Operator replicas. With leader election one reconciles and the others stand by; with `sharding.enabled` they share the Clusters. Every replica serves the metrics API."},
		{"resources", resources, "Resources of the operator's container."},
		{"watchNamespaces", []string{}, "Namespaces the operator watches (`--watch-namespace`); empty: every namespace. The RBAC stays cluster-wide."},
		{"sharding.enabled", false, "Share the Clusters among the replicas (`--sharding`, docs/sharding.md) instead of electing one leader."},
		{"metricsAPI.enabled", true, "Serve the built-in custom and external metrics APIs (docs/metrics.md): their Service, the RBAC of their delegated authentication and the HorizontalPodAutoscaler's read access. Off: `--metrics-api-custom=false --metrics-api-external=false` and none of these objects."},
		{"crds.install", true, "Install and upgrade the CRDs with the release (as templates: `helm upgrade` updates them)."},
		{"crds.keep", true, "Keep the CRDs, and with them every Cluster, Target … of the users, when the release is uninstalled (`helm.sh/resource-policy: keep`)."},
		{"extraArgs", []string{}, "More arguments of the operator (docs/operating.md), for example `--collector-poll-interval=10s`."},
		{"nodeSelector", map[string]any{}, "Node selector of the operator's pods."},
		{"tolerations", []any{}, "Tolerations of the operator's pods."},
		{"affinity", map[string]any{}, "Affinity of the operator's pods."},
	}, nil
}

// monitoringValues are the switches of the optional components found, off by default; a component that
// config/ does not provide gets no value, so that no switch promises what the chart cannot install.
func monitoringValues(present map[string]bool) []value {
	var out []value
	if present["ServiceMonitor"] {
		out = append(out, value{"monitoring.serviceMonitor.enabled", false,
			"A ServiceMonitor for the operator's own metrics (needs the monitoring.coreos.com CRDs)."})
	}
	if present["PrometheusRule"] {
		out = append(out, value{"monitoring.prometheusRule.enabled", false,
			"PrometheusRule alerts for what needs a human (needs the monitoring.coreos.com CRDs)."})
	}
	return out
}

// renderValuesYAML writes the values as nested YAML, each leaf after its description.
func renderValuesYAML(values []value) ([]byte, error) {
	var b strings.Builder
	b.WriteString(generatedHeader + "# docs/helm.md describes every value.\n")
	var open []string
	for _, v := range values {
		path := strings.Split(v.key, ".")
		common := 0
		for common < len(open) && common < len(path)-1 && open[common] == path[common] {
			common++
		}
		open = open[:common]
		for _, parent := range path[common : len(path)-1] {
			if len(open) == 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s%s:\n", strings.Repeat("  ", len(open)), parent)
			open = append(open, parent)
		}
		indent := strings.Repeat("  ", len(open))
		if len(open) == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s# %s\n", indent, v.doc)
		leaf := path[len(path)-1]
		data, err := yaml.Marshal(map[string]any{leaf: v.def})
		if err != nil {
			return nil, fmt.Errorf("value %s: %w", v.key, err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			b.WriteString(indent + line + "\n")
		}
	}
	return []byte(b.String()), nil
}

const (
	tableBegin = "<!-- helm-values:begin (generated by make helm-chart) -->"
	tableEnd   = "<!-- helm-values:end -->"
)

// rewriteValuesTable replaces the table between the helm-values markers of a Markdown file.
func rewriteValuesTable(path string, values []value) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	begin, end := strings.Index(text, tableBegin), strings.Index(text, tableEnd)
	if begin < 0 || end < begin {
		return fmt.Errorf("%s: no %q … %q section for the values table", path, tableBegin, tableEnd)
	}
	table, err := valuesTable(values)
	if err != nil {
		return err
	}
	text = text[:begin+len(tableBegin)] + "\n" + table + text[end:]
	return os.WriteFile(path, []byte(text), 0o644)
}

func valuesTable(values []value) (string, error) {
	var b strings.Builder
	b.WriteString("| value | default | what it does |\n| --- | --- | --- |\n")
	for _, v := range values {
		def, err := json.Marshal(v.def)
		if err != nil {
			return "", fmt.Errorf("value %s: %w", v.key, err)
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", v.key, def, v.doc)
	}
	return b.String(), nil
}
