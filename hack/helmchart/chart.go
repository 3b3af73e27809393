package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gnmic-operator/gnmic-operator/internal/manifests"
)

// chartName is the chart's name; the objects keep the names config/default gives them (gnmic-operator-…):
// the operator finds its metrics API Service, certificate Secret and leader election Lease by those names.
const chartName = "gnmic-operator"

// chart is the generated chart: its files by path relative to the chart directory, and its values.
type chart struct {
	files  map[string][]byte
	values []value
}

// component is what a value switches on: objects rendered only when the value is true.
type component struct {
	condition string
	dir       string
}

var (
	crds       = component{condition: ".Values.crds.install", dir: "crds"}
	metricsAPI = component{condition: ".Values.metricsAPI.enabled", dir: "metrics-api"}
	// optionalKinds are the kinds an optional directory may hold, each behind its own value, off by default.
	optionalKinds = map[string]component{
		"ServiceMonitor": {condition: ".Values.monitoring.serviceMonitor.enabled", dir: "monitoring"},
		"PrometheusRule": {condition: ".Values.monitoring.prometheusRule.enabled", dir: "monitoring"},
	}
)

// metricsAPIObjects are the objects of config/default that exist only for the built-in metrics API: its
// Service (which the APIServices point at), the front-proxy CA reader binding in kube-system and the
// HorizontalPodAutoscaler's read access. Each must be found: a rename in config/ fails the generator
// instead of leaving an object on when the metrics API is off.
var metricsAPIObjects = []string{
	"Service/gnmic-operator-metrics-api",
	"RoleBinding/gnmic-operator-metrics-adapter-auth-reader",
	"ClusterRole/gnmic-operator-metrics-adapter-reader",
	"ClusterRoleBinding/gnmic-operator-metrics-adapter-hpa-reader",
}

// generate turns the kustomize build of the install, and of each optional directory, into the chart.
func generate(install []byte, optional [][]byte, version string) (*chart, error) {
	objects, err := manifests.Decode(install)
	if err != nil {
		return nil, fmt.Errorf("decode the install: %w", err)
	}
	namespace, objects, err := takeNamespace(objects)
	if err != nil {
		return nil, err
	}
	c := &chart{files: map[string][]byte{}}
	deployment, err := findDeployment(objects)
	if err != nil {
		return nil, err
	}
	if c.values, err = chartValues(deployment); err != nil {
		return nil, err
	}

	metricsAPINames := map[string]bool{}
	for _, key := range metricsAPIObjects {
		metricsAPINames[key] = false
	}
	var optionalObjects []*unstructured.Unstructured
	for i, built := range optional {
		objs, err := manifests.Decode(built)
		if err != nil {
			return nil, fmt.Errorf("decode optional directory %d: %w", i+1, err)
		}
		optionalObjects = append(optionalObjects, objs...)
	}
	presentOptional := map[string]bool{}
	for _, obj := range optionalObjects {
		if _, ok := optionalKinds[obj.GetKind()]; !ok {
			return nil, fmt.Errorf("optional component %s %s: only %s can be optional", obj.GetKind(), obj.GetName(), optionalKindList())
		}
	}
	for _, obj := range append(objects, optionalObjects...) {
		key := obj.GetKind() + "/" + obj.GetName()
		if err := replaceNamespace(obj.Object, namespace); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		t := newTemplater()
		var gate *component
		dir := directoryOf(obj)
		switch {
		case obj.GetKind() == "CustomResourceDefinition":
			gate = &crds
			t.keepAnnotation(obj)
		case obj.GetKind() == "Deployment":
			if err := t.manager(obj); err != nil {
				return nil, err
			}
		default:
			if comp, ok := optionalKinds[obj.GetKind()]; ok {
				gate = &comp
				presentOptional[obj.GetKind()] = true
			}
			if _, ok := metricsAPINames[key]; ok {
				gate = &metricsAPI
				metricsAPINames[key] = true
			}
		}
		if gate != nil {
			dir = gate.dir
		}
		t.labels(obj)
		text, err := t.render(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if gate != nil {
			text = "{{- if " + gate.condition + " }}\n" + text + "{{- end }}\n"
		}
		path := filepath.Join("templates", dir, fileName(obj))
		if _, dup := c.files[path]; dup {
			return nil, fmt.Errorf("two objects make template %s", path)
		}
		c.files[path] = []byte(generatedHeader + text)
	}
	var missing []string
	for key, found := range metricsAPINames {
		if !found {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("metrics API objects not in the install: %v (renamed in config/? update metricsAPIObjects)", missing)
	}
	c.values = append(c.values, monitoringValues(presentOptional)...)
	valuesYAML, err := renderValuesYAML(c.values)
	if err != nil {
		return nil, err
	}
	c.files["values.yaml"] = valuesYAML
	c.files["Chart.yaml"] = []byte(chartYAML(version))
	c.files["templates/_helpers.tpl"] = []byte(helpers)
	c.files["templates/NOTES.txt"] = []byte(notes)
	c.files[".helmignore"] = []byte("# Generated by hack/helmchart (make helm-chart).\n.git/\n*.orig\n*~\n")
	return c, nil
}

const generatedHeader = "# Generated by hack/helmchart from config/ (make helm-chart): do not edit.\n"

func chartYAML(version string) string {
	return generatedHeader + `apiVersion: v2
name: ` + chartName + `
description: A Kubernetes operator that runs fleets of gNMIc telemetry collectors.
type: application
version: ` + version + `
appVersion: "` + version + `"
kubeVersion: ">=1.30.0-0"
home: https://github.com/gnmic-operator/gnmic-operator
`
}

// helpers holds the labels every object of the chart gets besides those of config/.
const helpers = `{{/* Generated by hack/helmchart (make helm-chart): do not edit. */}}
{{/* Labels of every object of the release, besides those config/ gives it. */}}
{{- define "gnmic-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
`

const notes = `{{/* Generated by hack/helmchart (make helm-chart): do not edit. */}}
gnmic-operator {{ .Chart.AppVersion }} runs in namespace {{ .Release.Namespace }} ({{ .Values.replicas }} replica(s),
{{- if .Values.sharding.enabled }} sharing the Clusters{{ else }} leader election{{ end }}).
{{- if .Values.metricsAPI.enabled }}
Its metrics APIs (custom.metrics.k8s.io, external.metrics.k8s.io) register as APIServices once a replica is ready:
  kubectl get apiservices v1beta1.custom.metrics.k8s.io v1beta1.external.metrics.k8s.io
{{- end }}
{{- if not .Values.crds.install }}
CRDs are not installed by this release (crds.install=false): install them first (make install).
{{- end }}
Documentation: docs/helm.md.
`

// takeNamespace removes the install's Namespace from the objects and returns its name: Helm installs into
// the release namespace (helm install --namespace … --create-namespace), so every reference to this one
// becomes {{ .Release.Namespace }}.
func takeNamespace(objects []*unstructured.Unstructured) (string, []*unstructured.Unstructured, error) {
	var namespace string
	var rest []*unstructured.Unstructured
	for _, obj := range objects {
		if obj.GetKind() != "Namespace" {
			rest = append(rest, obj)
			continue
		}
		if namespace != "" {
			return "", nil, fmt.Errorf("the install holds two Namespaces, %s and %s", namespace, obj.GetName())
		}
		namespace = obj.GetName()
	}
	if namespace == "" {
		return "", nil, errors.New("the install holds no Namespace: cannot tell which references are the release namespace")
	}
	return namespace, rest, nil
}

func findDeployment(objects []*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var found *unstructured.Unstructured
	for _, obj := range objects {
		if obj.GetKind() == "Deployment" {
			if found != nil {
				return nil, fmt.Errorf("the install holds two Deployments, %s and %s", found.GetName(), obj.GetName())
			}
			found = obj
		}
	}
	if found == nil {
		return nil, errors.New("the install holds no Deployment")
	}
	return found, nil
}

// replaceNamespace rewrites every occurrence of the install namespace in the object's strings (metadata,
// subjects, paramRefs …) as the release namespace. Template delimiters a string already holds (the
// Prometheus templates of an alert's annotations, say) are escaped, so that Helm renders them as they are.
func replaceNamespace(node any, namespace string) error {
	switch v := node.(type) {
	case map[string]any:
		for k, child := range v {
			if s, ok := child.(string); ok {
				v[k] = templated(s, namespace)
				continue
			}
			if err := replaceNamespace(child, namespace); err != nil {
				return err
			}
		}
	case []any:
		for i, child := range v {
			if s, ok := child.(string); ok {
				v[i] = templated(s, namespace)
				continue
			}
			if err := replaceNamespace(child, namespace); err != nil {
				return err
			}
		}
	}
	return nil
}

// templated is s in a template: its own delimiters escaped as raw strings ({{`{{`}}, which YAML quoting
// leaves alone), the install namespace as the release's.
func templated(s, namespace string) string {
	const open, close = "\x00open\x00", "\x00close\x00"
	s = strings.ReplaceAll(strings.ReplaceAll(s, "{{", open), "}}", close)
	s = strings.ReplaceAll(s, namespace, "{{ .Release.Namespace }}")
	return strings.ReplaceAll(strings.ReplaceAll(s, open, "{{`{{`}}"), close, "{{`}}`}}")
}

// directoryOf groups the templates by what they are.
func directoryOf(obj *unstructured.Unstructured) string {
	switch obj.GetKind() {
	case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
		return "rbac"
	case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
		return "admission"
	default:
		return "manager"
	}
}

// fileName is kind-name.yaml, without the common name prefix; CRDs by their resource name.
func fileName(obj *unstructured.Unstructured) string {
	name := strings.TrimPrefix(obj.GetName(), chartName+"-")
	if obj.GetKind() == "CustomResourceDefinition" {
		return name + ".yaml"
	}
	if obj.GetNamespace() == "kube-system" {
		name = "kube-system-" + name
	}
	return strings.ToLower(obj.GetKind()) + "-" + name + ".yaml"
}

func optionalKindList() string {
	var kinds []string
	for k := range optionalKinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return strings.Join(kinds, " and ")
}

func kustomizeBuild(kustomize, dir string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s build %s: %w: %s", kustomize, dir, err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// write replaces the chart directory's generated content: templates/ is removed first, so that an object
// gone from config/ leaves no template behind.
func (c *chart) write(dir string) error {
	if err := os.RemoveAll(filepath.Join(dir, "templates")); err != nil {
		return err
	}
	paths := make([]string, 0, len(c.files))
	for p := range c.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, c.files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}
