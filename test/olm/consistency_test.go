package olm

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// olmArgs are the arguments config/manifests adds to the manager for OLM: the OperatorGroup's target
// namespaces, which OLM writes into the pod annotation olm.targetNamespaces.
var olmArgs = []string{"--watch-namespace=$(WATCH_NAMESPACE)"}

func TestBundleCRDsAreTheCRDsOfConfig(t *testing.T) {
	b := loadBundle(t)
	want := configCRDs(t)
	if len(b.V1CRDs) != len(want) {
		t.Errorf("bundle has %d CRDs, config/crd/bases %d", len(b.V1CRDs), len(want))
	}
	for _, got := range b.V1CRDs {
		w, ok := want[got.Name]
		if !ok {
			t.Errorf("bundle CRD %s is not in config/crd/bases", got.Name)
			continue
		}
		if !reflect.DeepEqual(got.Spec, w.Spec) {
			t.Errorf("bundle CRD %s differs from config/crd/bases: run make bundle", got.Name)
		}
		if !reflect.DeepEqual(got.Annotations, w.Annotations) {
			t.Errorf("bundle CRD %s annotations %v, config %v", got.Name, got.Annotations, w.Annotations)
		}
	}
}

func TestCSVDeploymentIsTheManagerOfConfig(t *testing.T) {
	b := loadBundle(t)
	deployments := b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deployments) != 1 {
		t.Fatalf("CSV has %d deployments, want the manager only", len(deployments))
	}
	got := deployments[0].Spec
	want := configManagerDeployment(t).Spec
	if !reflect.DeepEqual(got.Replicas, want.Replicas) {
		t.Errorf("replicas %v, config/manager %v", *got.Replicas, *want.Replicas)
	}
	if len(got.Template.Spec.Containers) != 1 || len(want.Template.Spec.Containers) != 1 {
		t.Fatalf("want one container in the CSV (%d) and in config/manager (%d)", len(got.Template.Spec.Containers), len(want.Template.Spec.Containers))
	}
	gc, wc := got.Template.Spec.Containers[0], want.Template.Spec.Containers[0]
	if image := configManagerImage(t); gc.Image != image {
		t.Errorf("image %q, config/manager/kustomization.yaml %q", gc.Image, image)
	}
	if wantArgs := append(slices.Clone(wc.Args), olmArgs...); !slices.Equal(gc.Args, wantArgs) {
		t.Errorf("args %q, want config/manager's %q", gc.Args, wantArgs)
	}
	checks := map[string][2]any{
		"command":         {gc.Command, wc.Command},
		"ports":           {gc.Ports, wc.Ports},
		"livenessProbe":   {gc.LivenessProbe, wc.LivenessProbe},
		"readinessProbe":  {gc.ReadinessProbe, wc.ReadinessProbe},
		"resources":       {gc.Resources, wc.Resources},
		"securityContext": {gc.SecurityContext, wc.SecurityContext},
		"podSecurity":     {got.Template.Spec.SecurityContext, want.Template.Spec.SecurityContext},
	}
	for name, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s %+v, config/manager %+v", name, c[0], c[1])
		}
	}
	for _, e := range wc.Env {
		if !slices.ContainsFunc(gc.Env, func(g corev1.EnvVar) bool { return reflect.DeepEqual(g, e) }) {
			t.Errorf("env %s of config/manager is missing from the CSV", e.Name)
		}
	}
	if !slices.ContainsFunc(gc.Env, func(e corev1.EnvVar) bool {
		return e.Name == "WATCH_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['olm.targetNamespaces']"
	}) {
		t.Error("WATCH_NAMESPACE does not come from the olm.targetNamespaces annotation")
	}
	if containerImage := b.CSV.Annotations["containerImage"]; containerImage != gc.Image {
		t.Errorf("containerImage annotation %q, manager image %q", containerImage, gc.Image)
	}
	related := map[string]bool{}
	for _, ri := range b.CSV.Spec.RelatedImages {
		related[ri.Image] = true
	}
	if !related[gc.Image] {
		t.Errorf("relatedImages %v lack the operator image %s", b.CSV.Spec.RelatedImages, gc.Image)
	}
}

// configManagerImage is the manager image config/manager/kustomization.yaml sets (make bundle sets it to IMG).
func configManagerImage(t *testing.T) string {
	t.Helper()
	var k struct {
		Images []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "manager", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yamlUnmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	for _, img := range k.Images {
		if img.Name == "controller" {
			return img.NewName + ":" + img.NewTag
		}
	}
	t.Fatal("config/manager/kustomization.yaml sets no image for controller")
	return ""
}

func TestBundleRBACHasNoWildcards(t *testing.T) {
	b := loadBundle(t)
	spec := b.CSV.Spec.InstallStrategy.StrategySpec
	check := func(where string, rules []rbacv1.PolicyRule) {
		for i, r := range rules {
			for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames, r.NonResourceURLs} {
				if slices.ContainsFunc(field, func(s string) bool { return strings.Contains(s, "*") }) {
					t.Errorf("%s rule %d has a wildcard: %+v", where, i, r)
				}
			}
		}
	}
	for _, p := range spec.ClusterPermissions {
		check("clusterPermissions of "+p.ServiceAccountName, p.Rules)
	}
	for _, p := range spec.Permissions {
		check("permissions of "+p.ServiceAccountName, p.Rules)
	}
	for _, obj := range b.Objects {
		if obj.GetKind() != "ClusterRole" && obj.GetKind() != "Role" {
			continue
		}
		var role rbacv1.ClusterRole
		fromUnstructured(t, obj, &role)
		check(obj.GetKind()+" "+obj.GetName(), role.Rules)
	}
}

// The operator's ClusterRole from config/rbac (make manifests) is granted whole, and nothing broader.
func TestCSVClusterPermissionsGrantTheManagerRole(t *testing.T) {
	b := loadBundle(t)
	var role rbacv1.ClusterRole
	readYAML(t, filepath.Join(repoRoot, "config", "rbac", "role.yaml"), &role)
	cps := b.CSV.Spec.InstallStrategy.StrategySpec.ClusterPermissions
	if len(cps) != 1 || cps[0].ServiceAccountName != "gnmic-operator-controller-manager" {
		t.Fatalf("want clusterPermissions for gnmic-operator-controller-manager only, got %d", len(cps))
	}
	for _, r := range role.Rules {
		if !slices.ContainsFunc(cps[0].Rules, func(g rbacv1.PolicyRule) bool { return reflect.DeepEqual(g, r) }) {
			t.Errorf("config/rbac/role.yaml rule %+v is not in clusterPermissions", r)
		}
	}
}

func TestALMExamplesAreTheSamplesOneForEveryOwnedKind(t *testing.T) {
	b := loadBundle(t)
	examples, err := almExamples(b.CSV)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]*unstructured.Unstructured{}
	paths, _ := filepath.Glob(filepath.Join(repoRoot, "config", "samples", "operator_v1alpha1_*.yaml"))
	for _, p := range paths {
		for _, obj := range readYAMLDocuments(t, p) {
			samples[obj.GetKind()] = obj
		}
	}
	byKind := map[string]unstructured.Unstructured{}
	for _, ex := range examples {
		if _, dup := byKind[ex.GetKind()]; dup {
			t.Errorf("two alm-examples of kind %s", ex.GetKind())
		}
		byKind[ex.GetKind()] = ex
	}
	for _, kind := range sortedKeys(ownedByKind(b.CSV)) {
		ex, ok := byKind[kind]
		if !ok {
			t.Errorf("no alm-example of owned kind %s", kind)
			continue
		}
		s, ok := samples[kind]
		if !ok {
			t.Errorf("no config/samples file of kind %s", kind)
			continue
		}
		if !reflect.DeepEqual(normalized(t, ex.Object), normalized(t, s.Object)) {
			t.Errorf("alm-example of %s differs from config/samples: run make bundle", kind)
		}
	}
	if len(byKind) != len(b.CSV.Spec.CustomResourceDefinitions.Owned) {
		t.Errorf("%d alm-examples for %d owned kinds", len(byKind), len(b.CSV.Spec.CustomResourceDefinitions.Owned))
	}
}

// Stricter than olm-spec-descriptors, which looks only at the fields the examples set: every top-level
// spec field of every CRD has a spec descriptor, so that the console's form shows all of them.
func TestEveryTopLevelSpecFieldHasASpecDescriptor(t *testing.T) {
	b := loadBundle(t)
	owned := ownedByKind(b.CSV)
	for _, crd := range b.V1CRDs {
		desc, ok := owned[crd.Spec.Names.Kind]
		if !ok {
			t.Errorf("CRD %s is not owned by the CSV", crd.Name)
			continue
		}
		if desc.DisplayName == "" || desc.Description == "" || desc.Name != crd.Name {
			t.Errorf("owned CRD %s: name %q, displayName %q, description %q", crd.Name, desc.Name, desc.DisplayName, desc.Description)
		}
		for _, v := range crd.Spec.Versions {
			for _, field := range sortedKeys(v.Schema.OpenAPIV3Schema.Properties["spec"].Properties) {
				if !hasSpecDescriptor(desc, field) {
					t.Errorf("%s: spec.%s has no spec descriptor", crd.Spec.Names.Kind, field)
				}
			}
		}
	}
}

// What the console shows of a Cluster: its conditions, ready pods and capacity, and of every kind with a
// status: its conditions.
func TestStatusDescriptorsShowConditionsAndCapacity(t *testing.T) {
	b := loadBundle(t)
	owned := ownedByKind(b.CSV)
	for _, crd := range b.V1CRDs {
		v := crd.Spec.Versions[0]
		status, hasStatus := v.Schema.OpenAPIV3Schema.Properties["status"]
		if !hasStatus {
			continue
		}
		desc := owned[crd.Spec.Names.Kind]
		if len(desc.StatusDescriptors) == 0 {
			t.Errorf("%s has a status but no status descriptors", crd.Spec.Names.Kind)
		}
		if _, ok := status.Properties["conditions"]; ok {
			requireStatusDescriptor(t, desc, "conditions", "urn:alm:descriptor:io.kubernetes.conditions")
		}
		for _, d := range desc.StatusDescriptors {
			if _, ok := status.Properties[strings.Split(d.Path, ".")[0]]; !ok {
				t.Errorf("%s: status descriptor %s names no status field", crd.Spec.Names.Kind, d.Path)
			}
		}
	}
	cluster := owned["Cluster"]
	requireStatusDescriptor(t, cluster, "readyReplicas", "urn:alm:descriptor:com.tectonic.ui:podCount")
	requireStatusDescriptor(t, cluster, "unassignedTargets", "urn:alm:descriptor:text")
	requireStatusDescriptor(t, cluster, "podCapacity", "urn:alm:descriptor:text")
	requireSpecDescriptor(t, cluster, "replicas", "urn:alm:descriptor:com.tectonic.ui:podCount")
	requireSpecDescriptor(t, cluster, "resources", "urn:alm:descriptor:com.tectonic.ui:resourceRequirements")
	requireSpecDescriptor(t, cluster, "targetDistribution.podCapacity", "urn:alm:descriptor:com.tectonic.ui:number")
}

func requireStatusDescriptor(t *testing.T, desc operatorsv1alpha1.CRDDescription, path, x string) {
	t.Helper()
	for _, d := range desc.StatusDescriptors {
		if d.Path == path && slices.Contains(d.XDescriptors, x) {
			return
		}
	}
	t.Errorf("%s: no status descriptor %s with %s", desc.Kind, path, x)
}

func requireSpecDescriptor(t *testing.T, desc operatorsv1alpha1.CRDDescription, path, x string) {
	t.Helper()
	for _, d := range desc.SpecDescriptors {
		if d.Path == path && slices.Contains(d.XDescriptors, x) {
			return
		}
	}
	t.Errorf("%s: no spec descriptor %s with %s", desc.Kind, path, x)
}

var semverXYZ = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

func TestCSVMetadataForTheCatalog(t *testing.T) {
	csv := loadBundle(t).CSV
	if _, ok := csv.Annotations["createdAt"]; ok {
		t.Error("createdAt is set: make bundle strips it so that regenerating the bundle leaves no diff")
	}
	if got := csv.Annotations["capabilities"]; got != "Basic Install" {
		t.Errorf("capabilities %q, want Basic Install", got)
	}
	if got := csv.Annotations["categories"]; got != "Monitoring,Networking" {
		t.Errorf("categories %q", got)
	}
	if !semverXYZ.MatchString(csv.Spec.MinKubeVersion) {
		t.Errorf("minKubeVersion %q is not x.y.z", csv.Spec.MinKubeVersion)
	}
	if csv.Spec.Maturity != "alpha" || csv.Spec.DisplayName == "" || len(csv.Spec.Keywords) == 0 ||
		len(csv.Spec.Maintainers) == 0 || len(csv.Spec.Links) == 0 || csv.Spec.Provider.Name == "" {
		t.Errorf("maturity, displayName, keywords, maintainers, links or provider missing")
	}
	if len(csv.Spec.Description) < 500 {
		t.Errorf("description has %d characters: say what the operator does and how to start", len(csv.Spec.Description))
	}
	modes := map[operatorsv1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		modes[m.Type] = m.Supported
	}
	want := map[operatorsv1alpha1.InstallModeType]bool{
		operatorsv1alpha1.InstallModeTypeOwnNamespace:    true,
		operatorsv1alpha1.InstallModeTypeSingleNamespace: true,
		operatorsv1alpha1.InstallModeTypeMultiNamespace:  false,
		operatorsv1alpha1.InstallModeTypeAllNamespaces:   true,
	}
	if !reflect.DeepEqual(modes, want) {
		t.Errorf("install modes %v, want %v", modes, want)
	}
	if len(csv.Spec.Icon) != 1 || csv.Spec.Icon[0].MediaType != "image/svg+xml" {
		t.Fatalf("want one SVG icon, got %d", len(csv.Spec.Icon))
	}
	svg, err := base64.StdEncoding.DecodeString(csv.Spec.Icon[0].Data)
	if err != nil || !strings.HasPrefix(string(svg), "<svg ") {
		t.Errorf("icon is not a base64 SVG: %v", err)
	}
	if len(csv.Spec.APIServiceDefinitions.Owned) != 0 {
		t.Error("the CSV owns APIServices: the operator registers its metrics APIs itself at run time")
	}
}

// bundle.Dockerfile labels the image with exactly the annotations of bundle/metadata/annotations.yaml.
func TestBundleDockerfileLabelsAreTheAnnotations(t *testing.T) {
	var file struct {
		Annotations map[string]string `json:"annotations"`
	}
	readYAML(t, filepath.Join(bundleDir, "metadata", "annotations.yaml"), &file)
	f, err := os.Open(filepath.Join(repoRoot, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	labels := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(s.Text(), "LABEL "), "="); ok && strings.HasPrefix(s.Text(), "LABEL ") {
			labels[k] = v
		}
	}
	if !reflect.DeepEqual(labels, file.Annotations) {
		t.Errorf("bundle.Dockerfile labels %v, annotations.yaml %v", labels, file.Annotations)
	}
	if file.Annotations[packageLabel] != "gnmic-operator" {
		t.Errorf("package %q, want gnmic-operator", file.Annotations[packageLabel])
	}
}

// The scorecard configuration in the bundle runs exactly the checks this package re-implements.
func TestScorecardConfigRunsTheSixChecks(t *testing.T) {
	var cfg struct {
		Stages []struct {
			Tests []struct {
				Entrypoint []string `json:"entrypoint"`
			} `json:"tests"`
		} `json:"stages"`
	}
	data, err := os.ReadFile(filepath.Join(bundleDir, "tests", "scorecard", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yamlUnmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range cfg.Stages {
		for _, test := range st.Tests {
			got = append(got, test.Entrypoint[len(test.Entrypoint)-1])
		}
	}
	want := []string{"basic-check-spec", "olm-bundle-validation", "olm-crds-have-validation",
		"olm-crds-have-resources", "olm-spec-descriptors", "olm-status-descriptors"}
	if !slices.Equal(got, want) {
		t.Errorf("scorecard tests %q, want %q", got, want)
	}
}

func fromUnstructured(t *testing.T, obj *unstructured.Unstructured, out any) {
	t.Helper()
	data, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
}

// normalized round-trips an object through JSON, so that numbers decoded from YAML and JSON compare equal.
func normalized(t *testing.T, obj map[string]any) any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
