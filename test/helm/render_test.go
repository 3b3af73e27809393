package helm_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gnmic-operator/gnmic-operator/internal/manifests"
)

// configNamespace is config/default's namespace, where the chart is rendered to compare it with it.
const configNamespace = "gnmic-operator-system"

// releaseName is the release every test installs; the objects' names do not depend on it.
const releaseName = "gnmic-operator"

// chartLabels are the labels the chart adds to every object besides config/'s.
var chartLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}

// metricsAPIObjects are the objects only the metrics API needs (metricsAPI.enabled).
var metricsAPIObjects = []string{
	"ClusterRole//gnmic-operator-metrics-adapter-reader",
	"ClusterRoleBinding//gnmic-operator-metrics-adapter-hpa-reader",
	"RoleBinding/kube-system/gnmic-operator-metrics-adapter-auth-reader",
	"Service/" + configNamespace + "/gnmic-operator-metrics-api",
}

func repoRoot() string { return filepath.Join("..", "..") }

// chartDir is $HELM_CHART (make test-helm), else the committed chart.
func chartDir() string {
	if dir := os.Getenv("HELM_CHART"); dir != "" {
		return dir
	}
	return filepath.Join(repoRoot(), "charts", "gnmic-operator")
}

// fataler is what loadChart needs of a test: testing.T or Ginkgo's GinkgoT().
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func loadChart(t fataler, dir string) *chart.Chart {
	t.Helper()
	c, err := loader.Load(dir)
	if err != nil {
		t.Fatalf("load chart %s: %v", dir, err)
	}
	return c
}

// render is `helm template` of the chart into namespace with values, through the Helm SDK.
func render(t *testing.T, c *chart.Chart, namespace string, values map[string]any) map[string]*unstructured.Unstructured {
	t.Helper()
	install := action.NewInstall(&action.Configuration{})
	install.ClientOnly, install.DryRun = true, true
	install.ReleaseName, install.Namespace = releaseName, namespace
	install.KubeVersion = &chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}
	rel, err := install.Run(c, values)
	if err != nil {
		t.Fatalf("render the chart with %v: %v", values, err)
	}
	objects, err := manifests.Decode([]byte(rel.Manifest))
	if err != nil {
		t.Fatalf("decode the rendered chart: %v", err)
	}
	return byKey(t, objects)
}

// kustomizeBuild is `kustomize build dir` with $KUSTOMIZE, else bin/kustomize.
func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	binary := os.Getenv("KUSTOMIZE")
	if binary == "" {
		binary = filepath.Join(repoRoot(), "bin", "kustomize")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, "build", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build %s (make kustomize installs it): %v: %s", dir, err, stderr.String())
	}
	objects, err := manifests.Decode(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func key(obj *unstructured.Unstructured) string {
	return obj.GetKind() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

func byKey(t *testing.T, objects []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, obj := range objects {
		if _, dup := out[key(obj)]; dup {
			t.Fatalf("%s twice", key(obj))
		}
		out[key(obj)] = obj
	}
	return out
}

func keys(objects map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objects))
	for k := range objects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// managerContainer is the operator's container of the rendered Deployment.
func managerContainer(t *testing.T, objects map[string]*unstructured.Unstructured, namespace string) map[string]any {
	t.Helper()
	d, ok := objects["Deployment/"+namespace+"/gnmic-operator-controller-manager"]
	if !ok {
		t.Fatalf("no operator Deployment in %s: %v", namespace, keys(objects))
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	return containers[0].(map[string]any)
}

func args(t *testing.T, objects map[string]*unstructured.Unstructured, namespace string) []string {
	t.Helper()
	var out []string
	for _, a := range managerContainer(t, objects, namespace)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

// TestChartWithItsDefaultsIsConfigDefault renders the chart with its defaults into config/default's
// namespace and compares it, object by object and field by field, with `kustomize build config/default`:
// the only differences allowed are the chart's labels (for kustomize's managed-by), the image pull policy,
// the CRDs' keep annotation, and config/default's Namespace, which Helm does not own.
func TestChartWithItsDefaultsIsConfigDefault(t *testing.T) {
	rendered := render(t, loadChart(t, chartDir()), configNamespace, nil)
	built := kustomizeBuild(t, filepath.Join(repoRoot(), "config", "default"))
	want := map[string]*unstructured.Unstructured{}
	for _, obj := range built {
		if obj.GetKind() == "Namespace" {
			continue
		}
		labels := obj.GetLabels()
		delete(labels, "app.kubernetes.io/managed-by")
		obj.SetLabels(labels)
		want[key(obj)] = obj
	}
	for k, obj := range rendered {
		labels := obj.GetLabels()
		for _, l := range chartLabels {
			if labels[l] == "" {
				t.Errorf("%s lacks the chart's label %s", k, l)
			}
			delete(labels, l)
		}
		obj.SetLabels(labels)
		if obj.GetKind() == "CustomResourceDefinition" {
			annotations := obj.GetAnnotations()
			if annotations["helm.sh/resource-policy"] != "keep" {
				t.Errorf("CRD %s is not kept at uninstall by default", obj.GetName())
			}
			delete(annotations, "helm.sh/resource-policy")
			obj.SetAnnotations(annotations)
		}
		if obj.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			c := containers[0].(map[string]any)
			if c["imagePullPolicy"] != "IfNotPresent" {
				t.Errorf("image pull policy %v, want IfNotPresent", c["imagePullPolicy"])
			}
			delete(c, "imagePullPolicy")
			_ = unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")
		}
	}
	if !reflect.DeepEqual(keys(rendered), keys(want)) {
		t.Fatalf("the chart renders %v\nconfig/default builds %v", keys(rendered), keys(want))
	}
	for k, obj := range rendered {
		if !reflect.DeepEqual(obj.Object, want[k].Object) {
			t.Errorf("%s differs from config/default's:\nchart:   %v\nconfig/: %v", k, obj.Object, want[k].Object)
		}
	}
}

func TestChartValues(t *testing.T) {
	c := loadChart(t, chartDir())
	const ns = "telemetry-ops"

	t.Run("the release namespace replaces config/default's everywhere", func(t *testing.T) {
		rendered := render(t, c, ns, nil)
		for k, obj := range rendered {
			data := fmt.Sprint(obj.Object)
			if strings.Contains(data, configNamespace) {
				t.Errorf("%s still names %s: %s", k, configNamespace, data)
			}
			if obj.GetNamespace() != "" && obj.GetNamespace() != ns && k != "RoleBinding/kube-system/gnmic-operator-metrics-adapter-auth-reader" {
				t.Errorf("%s is outside the release namespace", k)
			}
		}
		subjects, _, _ := unstructured.NestedSlice(rendered["RoleBinding/kube-system/gnmic-operator-metrics-adapter-auth-reader"].Object, "subjects")
		if got := subjects[0].(map[string]any); got["namespace"] != ns || got["name"] != "gnmic-operator-controller-manager" {
			t.Errorf("the kube-system auth reader binds %v, not the operator's ServiceAccount in %s", got, ns)
		}
	})

	t.Run("image, replicas, resources, scheduling and extra arguments", func(t *testing.T) {
		rendered := render(t, c, ns, map[string]any{
			"image":    map[string]any{"repository": "registry.example/gnmic-operator", "tag": "v9.9.9", "pullPolicy": "Always"},
			"replicas": 3,
			// Helm merges maps with the chart's defaults, key by key.
			"resources":    map[string]any{"limits": map[string]any{"memory": "1Gi"}, "requests": map[string]any{"cpu": "250m"}},
			"extraArgs":    []any{"--collector-poll-interval=10s"},
			"nodeSelector": map[string]any{"kubernetes.io/os": "linux"},
			"tolerations":  []any{map[string]any{"key": "ops", "operator": "Exists"}},
		})
		d := rendered["Deployment/"+ns+"/gnmic-operator-controller-manager"]
		if replicas, _, _ := unstructured.NestedFloat64(d.Object, "spec", "replicas"); replicas != 3 {
			t.Errorf("replicas %v, want 3", replicas)
		}
		container := managerContainer(t, rendered, ns)
		if container["image"] != "registry.example/gnmic-operator:v9.9.9" || container["imagePullPolicy"] != "Always" {
			t.Errorf("image %v %v", container["image"], container["imagePullPolicy"])
		}
		if got := fmt.Sprint(container["resources"]); got != "map[limits:map[cpu:1 memory:1Gi] requests:map[cpu:250m memory:128Mi]]" {
			t.Errorf("resources %s", got)
		}
		if a := args(t, rendered, ns); a[len(a)-1] != "--collector-poll-interval=10s" {
			t.Errorf("args %v do not end with the extra argument", a)
		}
		podSpec, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
		if fmt.Sprint(podSpec["nodeSelector"]) != "map[kubernetes.io/os:linux]" || fmt.Sprint(podSpec["tolerations"]) != "[map[key:ops operator:Exists]]" {
			t.Errorf("scheduling %v %v", podSpec["nodeSelector"], podSpec["tolerations"])
		}
		if _, set := podSpec["affinity"]; set {
			t.Errorf("an empty affinity value is rendered: %v", podSpec["affinity"])
		}
	})

	t.Run("watch namespaces and sharding become the operator's flags", func(t *testing.T) {
		a := args(t, render(t, c, ns, map[string]any{"watchNamespaces": []any{"lab", "prod"}, "sharding": map[string]any{"enabled": true}}), ns)
		joined := strings.Join(a, " ")
		if !strings.Contains(joined, "--watch-namespace=lab,prod") || !strings.Contains(joined, "--sharding") || strings.Contains(joined, "--leader-elect") {
			t.Errorf("args %v: want --watch-namespace=lab,prod and --sharding instead of --leader-elect", a)
		}
		a = args(t, render(t, c, ns, nil), ns)
		joined = strings.Join(a, " ")
		if strings.Contains(joined, "--watch-namespace") || strings.Contains(joined, "--sharding") || !strings.Contains(joined, "--leader-elect") {
			t.Errorf("default args %v: want leader election over every namespace", a)
		}
	})

	t.Run("the metrics API off removes its objects and switches both APIs off", func(t *testing.T) {
		on := render(t, c, configNamespace, nil)
		off := render(t, c, configNamespace, map[string]any{"metricsAPI": map[string]any{"enabled": false}})
		var gone []string
		for k := range on {
			if _, kept := off[k]; !kept {
				gone = append(gone, k)
			}
		}
		sort.Strings(gone)
		if !reflect.DeepEqual(gone, metricsAPIObjects) {
			t.Errorf("with the metrics API off the chart drops %v, want %v", gone, metricsAPIObjects)
		}
		joined := strings.Join(args(t, off, configNamespace), " ")
		if !strings.Contains(joined, "--metrics-api-custom=false --metrics-api-external=false") {
			t.Errorf("args %s do not switch the metrics APIs off", joined)
		}
	})

	t.Run("CRDs: installed and kept by default, or neither", func(t *testing.T) {
		count := func(objects map[string]*unstructured.Unstructured, keep bool) (crds, kept int) {
			for _, obj := range objects {
				if obj.GetKind() == "CustomResourceDefinition" {
					crds++
					if obj.GetAnnotations()["helm.sh/resource-policy"] == "keep" {
						kept++
					}
				}
			}
			return crds, kept
		}
		// Every CRD of config/default, whatever their number.
		want := 0
		for _, obj := range kustomizeBuild(t, filepath.Join(repoRoot(), "config", "default")) {
			if obj.GetKind() == "CustomResourceDefinition" {
				want++
			}
		}
		if crds, kept := count(render(t, c, ns, nil), true); crds != want || kept != want || want == 0 {
			t.Errorf("defaults: %d CRDs, %d kept; want %d and %d", crds, kept, want, want)
		}
		if crds, kept := count(render(t, c, ns, map[string]any{"crds": map[string]any{"keep": false}}), false); crds != want || kept != 0 {
			t.Errorf("crds.keep=false: %d CRDs, %d kept; want %d and 0", crds, kept, want)
		}
		if crds, _ := count(render(t, c, ns, map[string]any{"crds": map[string]any{"install": false}}), false); crds != 0 {
			t.Errorf("crds.install=false: %d CRDs", crds)
		}
	})
}

// TestOptionalComponentsAreRenderedOnlyWhenSwitchedOn generates a chart with the generator of make
// helm-chart and one optional directory (testdata/monitoring: a ServiceMonitor and a PrometheusRule, as
// config/ would hold them) and renders it with the switches off (the defaults) and on.
func TestOptionalComponentsAreRenderedOnlyWhenSwitchedOn(t *testing.T) {
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		kustomize = filepath.Join(repoRoot(), "bin", "kustomize")
	}
	kustomize, _ = filepath.Abs(kustomize)
	out := filepath.Join(t.TempDir(), "chart")
	optional, _ := filepath.Abs(filepath.Join("testdata", "monitoring"))
	cmd := exec.Command("go", "run", "./hack/helmchart", "--kustomize", kustomize, "--optional", optional, "--out", out, "--docs", "")
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/helmchart: %v: %s", err, output)
	}
	c := loadChart(t, out)
	const ns = "telemetry-ops"
	monitoring := func(objects map[string]*unstructured.Unstructured) []string {
		var found []string
		for k, obj := range objects {
			if obj.GetKind() == "ServiceMonitor" || obj.GetKind() == "PrometheusRule" {
				found = append(found, k)
			}
		}
		sort.Strings(found)
		return found
	}
	if found := monitoring(render(t, c, ns, nil)); len(found) != 0 {
		t.Errorf("with the defaults the chart renders %v", found)
	}
	on := map[string]any{"monitoring": map[string]any{
		"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}}}
	want := []string{"PrometheusRule/" + ns + "/gnmic-operator-alerts", "ServiceMonitor/" + ns + "/gnmic-operator-metrics-monitor"}
	if found := monitoring(render(t, c, ns, on)); !reflect.DeepEqual(found, want) {
		t.Errorf("switched on the chart renders %v, want %v", found, want)
	}
	only := map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}}
	if found := monitoring(render(t, c, ns, only)); !reflect.DeepEqual(found, want[1:]) {
		t.Errorf("with only the ServiceMonitor on the chart renders %v", found)
	}
}

// TestChartsAlertsAreConfigPrometheus renders the chart's own monitoring objects (config/prometheus, behind
// their values) and finds them equal to what kustomize builds there: the alerts' Prometheus templates
// ({{ $labels.cluster }}) survive Helm's templating as they are.
func TestChartsAlertsAreConfigPrometheus(t *testing.T) {
	want := map[string]*unstructured.Unstructured{}
	for _, obj := range kustomizeBuild(t, filepath.Join(repoRoot(), "config", "prometheus")) {
		want[obj.GetKind()] = obj
	}
	on := map[string]any{"monitoring": map[string]any{
		"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}}}
	got := map[string]*unstructured.Unstructured{}
	for _, obj := range render(t, loadChart(t, chartDir()), configNamespace, on) {
		if obj.GetKind() == "PrometheusRule" || obj.GetKind() == "ServiceMonitor" {
			got[obj.GetKind()] = obj
		}
	}
	for _, kind := range []string{"PrometheusRule", "ServiceMonitor"} {
		if want[kind] == nil || got[kind] == nil {
			t.Fatalf("%s: config/prometheus has %v, the chart renders %v", kind, want[kind] != nil, got[kind] != nil)
		}
		if !reflect.DeepEqual(want[kind].Object["spec"], got[kind].Object["spec"]) {
			t.Errorf("the chart's %s differs from config/prometheus's:\nchart:  %v\nconfig: %v", kind, got[kind].Object["spec"],
				want[kind].Object["spec"])
		}
	}
	rules, _ := json.Marshal(got["PrometheusRule"].Object["spec"])
	if !strings.Contains(string(rules), "{{ $labels.cluster }}") {
		t.Error("the rendered alerts lost their Prometheus templates")
	}
}

// TestChartPassesHelmLint runs `helm lint --strict` through the SDK, with the defaults and with every switch
// flipped: warnings fail too.
func TestChartPassesHelmLint(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"defaults": nil,
		"switched": {
			"sharding": map[string]any{"enabled": true}, "metricsAPI": map[string]any{"enabled": false},
			"crds": map[string]any{"install": false}, "watchNamespaces": []any{"lab"}, "extraArgs": []any{"--kube-api-qps=50"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict, lint.Namespace = true, configNamespace
			lint.KubeVersion = &chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}
			result := lint.Run([]string{chartDir()}, values)
			for _, err := range result.Errors {
				t.Errorf("helm lint: %v", err)
			}
			for _, m := range result.Messages {
				t.Logf("helm lint: %s", m)
			}
		})
	}
}
