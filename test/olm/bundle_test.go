package olm

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// repoRoot is the repository root seen from this package's directory, where go test runs.
const repoRoot = "../.."

var (
	bundleDir    = filepath.Join(repoRoot, "bundle")
	manifestsDir = filepath.Join(bundleDir, "manifests")
	csvFile      = filepath.Join(manifestsDir, "gnmic-operator.clusterserviceversion.yaml")
)

// loadBundle loads bundle/manifests the way OLM's tooling does.
func loadBundle(t *testing.T) *manifests.Bundle {
	t.Helper()
	b, err := manifests.GetBundleFromDir(manifestsDir)
	if err != nil {
		t.Fatalf("load bundle from %s: %v", manifestsDir, err)
	}
	if b.CSV == nil {
		t.Fatalf("bundle in %s has no ClusterServiceVersion", manifestsDir)
	}
	return b
}

// readYAML decodes one YAML document into out.
func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

// readYAMLDocuments decodes every document of a multi-document YAML file.
func readYAMLDocuments(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range splitYAML(data) {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatalf("decode %s: %v", path, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs
}

// splitYAML splits a YAML stream at its "---" document separators.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	start := 0
	for i := 0; i <= len(data); i++ {
		atLineStart := i == 0 || data[i-1] == '\n'
		if i == len(data) || (atLineStart && len(data)-i >= 3 && string(data[i:i+3]) == "---" &&
			(len(data) == i+3 || data[i+3] == '\n' || data[i+3] == '\r')) {
			docs = append(docs, data[start:i])
			if i < len(data) {
				i += 3
				start = i
			}
		}
	}
	return docs
}

// configCRDs reads the CRDs that `make manifests` generates into config/crd/bases, by name.
func configCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, p := range paths {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		readYAML(t, p, crd)
		crds[crd.Name] = crd
	}
	return crds
}

// configManagerDeployment reads the operator Deployment of config/manager/manager.yaml.
func configManagerDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	for _, obj := range readYAMLDocuments(t, filepath.Join(repoRoot, "config", "manager", "manager.yaml")) {
		if obj.GetKind() != "Deployment" {
			continue
		}
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatalf("encode manager Deployment: %v", err)
		}
		d := &appsv1.Deployment{}
		if err := yaml.UnmarshalStrict(data, d); err != nil {
			t.Fatalf("decode manager Deployment: %v", err)
		}
		return d
	}
	t.Fatal("config/manager/manager.yaml has no Deployment")
	return nil
}

// ownedByKind indexes the CSV's owned CRD descriptions by kind.
func ownedByKind(csv *operatorsv1alpha1.ClusterServiceVersion) map[string]operatorsv1alpha1.CRDDescription {
	owned := map[string]operatorsv1alpha1.CRDDescription{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[d.Kind] = d
	}
	return owned
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// yamlUnmarshal decodes YAML (or JSON) leniently, as the OLM loaders do.
func yamlUnmarshal(data []byte, out any) error { return yaml.Unmarshal(data, out) }
