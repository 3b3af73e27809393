package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// templater turns one object into template text. Where a value is substituted the object gets a marker
// (@@HELM<n>@@) as a field value or a key; once the object is marshalled, the line holding a marker is
// replaced by what the marker's function makes of it. The rest of the object is marshalled as it is, so
// the template is config/'s object, field for field.
type templater struct {
	markers []marker
}

// lineFunc makes the template text of a marked line from the column of its key as spaces and what precedes
// the marker (for a value, "key: ", "- key: " or "- "; for a key, only the indentation).
type lineFunc func(indent, prefix string) string

type marker struct {
	line lineFunc
	// key: the marker is a key, replaced by whole lines; it cannot be the first key of a list item.
	key bool
}

var markerPattern = regexp.MustCompile(`['"]?@@HELM(\d+)@@['"]?`)

func newTemplater() *templater { return &templater{} }

func (t *templater) mark(f lineFunc) string {
	t.markers = append(t.markers, marker{line: f})
	return fmt.Sprintf("@@HELM%d@@", len(t.markers)-1)
}

// value marks a field whose value is the template expression text, unquoted (numbers, blocks).
func (t *templater) value(text string) string {
	return t.mark(func(_, prefix string) string { return prefix + text })
}

// block marks a field replaced by lines made from its indentation (a key marker: the field's name is in
// the lines).
func (t *templater) block(lines func(indent string) []string) string {
	t.markers = append(t.markers, marker{key: true, line: func(indent, _ string) string { return strings.Join(lines(indent), "\n") }})
	return fmt.Sprintf("@@HELM%d@@", len(t.markers)-1)
}

func (t *templater) render(obj *unstructured.Unstructured) (string, error) {
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	used := 0
	for i, line := range lines {
		loc := markerPattern.FindStringSubmatchIndex(line)
		if loc == nil {
			continue
		}
		n, _ := strconv.Atoi(line[loc[2]:loc[3]])
		if n >= len(t.markers) {
			return "", fmt.Errorf("unknown marker in %q", line)
		}
		prefix := line[:loc[0]]
		m := t.markers[n]
		if m.key && strings.TrimSpace(prefix) != "" {
			return "", fmt.Errorf("a key marker is the first key of a list item: %q", line)
		}
		// The key's column: the indentation and any "- " of the list items it opens.
		column := len(prefix) - len(strings.TrimLeft(prefix, " -"))
		lines[i] = m.line(strings.Repeat(" ", column), prefix)
		used++
	}
	if used != len(t.markers) {
		return "", fmt.Errorf("%d of %d markers placed: a marker was quoted across lines", used, len(t.markers))
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// labels adds the chart's labels to the object's own (not to selectors or pod templates, which a release
// must not change) and drops config/'s app.kubernetes.io/managed-by: kustomize, which Helm's replaces.
func (t *templater) labels(obj *unstructured.Unstructured) {
	labels, _, _ := unstructured.NestedMap(obj.Object, "metadata", "labels")
	if labels == nil {
		labels = map[string]any{}
	}
	delete(labels, "app.kubernetes.io/managed-by")
	labels[t.block(func(indent string) []string {
		return []string{fmt.Sprintf(`%s{{- include "gnmic-operator.labels" . | nindent %d }}`, indent, len(indent))}
	})] = ""
	_ = unstructured.SetNestedMap(obj.Object, labels, "metadata", "labels")
}

// keepAnnotation makes Helm keep a CRD at uninstall while crds.keep is on: deleting a CRD deletes every
// custom resource of its kind, the users' Clusters and Targets with it.
func (t *templater) keepAnnotation(obj *unstructured.Unstructured) {
	annotations, _, _ := unstructured.NestedMap(obj.Object, "metadata", "annotations")
	if annotations == nil {
		annotations = map[string]any{}
	}
	annotations[t.block(func(indent string) []string {
		return []string{
			indent + "{{- if .Values.crds.keep }}",
			indent + "helm.sh/resource-policy: keep",
			indent + "{{- end }}",
		}
	})] = ""
	_ = unstructured.SetNestedMap(obj.Object, annotations, "metadata", "annotations")
}

// leaderElectArg is the argument config/manager runs the operator with; --sharding replaces it.
const leaderElectArg = "--leader-elect"

// manager substitutes the values of the operator's Deployment: replicas, image, pull policy, arguments,
// resources and scheduling. Every field it expects is checked, so that a change of config/manager that
// the chart would silently miss fails the generator.
func (t *templater) manager(obj *unstructured.Unstructured) error {
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); !found {
		return fmt.Errorf("Deployment %s has no spec.replicas", obj.GetName())
	}
	_ = unstructured.SetNestedField(obj.Object, t.value("{{ .Values.replicas }}"), "spec", "replicas")

	podSpec, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
	containers, _ := podSpec["containers"].([]any)
	if len(containers) != 1 {
		return fmt.Errorf("Deployment %s has %d containers, the chart knows one", obj.GetName(), len(containers))
	}
	container, _ := containers[0].(map[string]any)
	if _, ok := container["image"].(string); !ok {
		return fmt.Errorf("Deployment %s: the container has no image", obj.GetName())
	}
	container["image"] = "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
	container["imagePullPolicy"] = "{{ .Values.image.pullPolicy }}"

	args, err := stringList(container["args"])
	if err != nil {
		return fmt.Errorf("Deployment %s args: %w", obj.GetName(), err)
	}
	if !contains(args, leaderElectArg) {
		return fmt.Errorf("Deployment %s: args %v lack %s, which sharding.enabled replaces", obj.GetName(), args, leaderElectArg)
	}
	container["args"] = t.mark(func(indent, prefix string) string {
		return strings.Join(managerArgs(indent, prefix, args), "\n")
	})

	if _, ok := container["resources"].(map[string]any); !ok {
		return fmt.Errorf("Deployment %s: the container has no resources", obj.GetName())
	}
	container["resources"] = t.mark(func(indent, prefix string) string {
		return strings.TrimRight(prefix, " ") + fmt.Sprintf(" {{- toYaml .Values.resources | nindent %d }}", len(indent)+2)
	})

	for _, field := range []string{"nodeSelector", "tolerations", "affinity"} {
		if _, set := podSpec[field]; set {
			return fmt.Errorf("Deployment %s sets %s: the chart's value %s would replace it", obj.GetName(), field, field)
		}
		podSpec[t.block(func(indent string) []string {
			return []string{
				indent + "{{- with .Values." + field + " }}",
				indent + field + ": {{- toYaml . | nindent " + strconv.Itoa(len(indent)+2) + " }}",
				indent + "{{- end }}",
			}
		})] = ""
	}
	containers[0] = container
	podSpec["containers"] = containers
	return unstructured.SetNestedMap(obj.Object, podSpec, "spec", "template", "spec")
}

// managerArgs are config/manager's arguments, --leader-elect swapped for --sharding when sharding is on,
// followed by those the values add.
func managerArgs(indent, prefix string, args []string) []string {
	lines := []string{strings.TrimRight(prefix, " ")}
	for _, arg := range args {
		if arg == leaderElectArg {
			lines = append(lines,
				indent+"{{- if .Values.sharding.enabled }}",
				indent+"- --sharding",
				indent+"{{- else }}",
				indent+"- "+leaderElectArg,
				indent+"{{- end }}")
			continue
		}
		lines = append(lines, indent+"- "+strconv.Quote(arg))
	}
	return append(lines,
		indent+"{{- with .Values.watchNamespaces }}",
		indent+`- {{ printf "--watch-namespace=%s" (join "," .) | quote }}`,
		indent+"{{- end }}",
		indent+"{{- if not .Values.metricsAPI.enabled }}",
		indent+"- --metrics-api-custom=false",
		indent+"- --metrics-api-external=false",
		indent+"{{- end }}",
		indent+"{{- range .Values.extraArgs }}",
		indent+"- {{ . | quote }}",
		indent+"{{- end }}")
}

func stringList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list: %v", v)
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("not a string: %v", item)
		}
		out = append(out, s)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}
