package olm

// The Operator SDK scorecard's basic and OLM suites (bundle/tests/scorecard/config.yaml) re-implemented
// over the bundle, following operator-sdk v1.42.3 internal/scorecard/tests (basic.go, olm.go,
// crhelper.go), so that they run in `go test` without a cluster or the scorecard-test image. Each check
// returns the scorecard's state, errors and suggestions; the tests require the pass state, and the
// stricter tests in consistency_test.go turn the relevant suggestions into requirements.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type scorecardState string

const (
	passState  scorecardState = "pass"
	failState  scorecardState = "fail"
	errorState scorecardState = "error"
)

// scorecardResult mirrors scorecard v1alpha3 TestResult.
type scorecardResult struct {
	state       scorecardState
	errors      []string
	suggestions []string
}

func newResult() scorecardResult { return scorecardResult{state: passState} }

func (r *scorecardResult) fail(state scorecardState, msg string) {
	r.state = state
	r.errors = append(r.errors, msg)
}

// almExamples decodes the CSV's alm-examples annotation (crhelper.go GetCRs).
func almExamples(csv *operatorsv1alpha1.ClusterServiceVersion) ([]unstructured.Unstructured, error) {
	raw := csv.GetAnnotations()["alm-examples"]
	if raw == "" {
		return nil, nil
	}
	var crs []unstructured.Unstructured
	if err := json.Unmarshal([]byte(raw), &crs); err != nil {
		return nil, fmt.Errorf("failed to parse alm-examples annotation: %v", err)
	}
	return crs, nil
}

// basicCheckSpec is basic-check-spec: every example has a spec. The scorecard only suggests adding one.
func basicCheckSpec(b *manifests.Bundle) scorecardResult {
	r := newResult()
	crs, err := almExamples(b.CSV)
	if err != nil {
		r.fail(failState, fmt.Sprintf("error getting custom resources: %s", err))
	}
	for _, cr := range crs {
		if cr.Object["spec"] == nil {
			r.suggestions = append(r.suggestions, fmt.Sprintf("spec missing from [%+v]", cr.GetName()))
			break
		}
	}
	return r
}

// olmBundleValidation is olm-bundle-validation: the bundle format checks of operator-registry's
// ValidateBundleFormat, then the default bundle validators over the bundle, its CSV and its CRDs.
func olmBundleValidation(root string) scorecardResult {
	r := newResult()
	for _, err := range validateBundleFormat(root) {
		r.fail(failState, err.Error())
	}
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "manifests"))
	if err != nil {
		r.fail(failState, err.Error())
		return r
	}
	objs := []any{b, b.CSV}
	for _, crd := range b.V1CRDs {
		objs = append(objs, crd)
	}
	for _, crd := range b.V1beta1CRDs {
		objs = append(objs, crd)
	}
	for _, result := range validation.DefaultBundleValidators.Validate(objs...) {
		for _, e := range result.Errors {
			r.fail(failState, e.Error())
		}
		for _, w := range result.Warnings {
			r.suggestions = append(r.suggestions, w.Error())
		}
	}
	return r
}

// Bundle annotation keys (operator-registry pkg/lib/bundle).
const (
	mediatypeLabel      = "operators.operatorframework.io.bundle.mediatype.v1"
	manifestsLabel      = "operators.operatorframework.io.bundle.manifests.v1"
	metadataLabel       = "operators.operatorframework.io.bundle.metadata.v1"
	packageLabel        = "operators.operatorframework.io.bundle.package.v1"
	channelsLabel       = "operators.operatorframework.io.bundle.channels.v1"
	channelDefaultLabel = "operators.operatorframework.io.bundle.channel.default.v1"
)

// validateBundleFormat follows operator-registry's ValidateBundleFormat: manifests/ and metadata/ exist,
// the media type follows from the manifests (registry+v1 when there is a CSV), and the annotations file
// has every required annotation with a valid value.
func validateBundleFormat(root string) []error {
	var errs []error
	for _, dir := range []string{"manifests", "metadata"} {
		if info, err := os.Stat(filepath.Join(root, dir)); err != nil || !info.IsDir() {
			errs = append(errs, fmt.Errorf("Unable to locate %s directory", dir))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	mediaType, err := bundleMediaType(filepath.Join(root, "manifests"))
	if err != nil {
		errs = append(errs, err)
	}
	var file struct {
		Annotations map[string]string `json:"annotations"`
	}
	data, err := os.ReadFile(filepath.Join(root, "metadata", "annotations.yaml"))
	if err != nil {
		return append(errs, fmt.Errorf("Could not find annotations file: %v", err))
	}
	if err := yamlUnmarshal(data, &file); err != nil || file.Annotations == nil {
		return append(errs, fmt.Errorf("Could not find annotations file: %v", err))
	}
	want := map[string]string{
		mediatypeLabel: mediaType, manifestsLabel: "manifests/", metadataLabel: "metadata/",
		packageLabel: "", channelsLabel: "", channelDefaultLabel: "",
	}
	for _, label := range sortedKeys(want) {
		val, ok := file.Annotations[label]
		if !ok && label != channelDefaultLabel {
			errs = append(errs, fmt.Errorf("Missing annotation %q", label))
		}
		switch label {
		case mediatypeLabel, manifestsLabel, metadataLabel:
			if val != want[label] {
				errs = append(errs, fmt.Errorf("Expecting annotation %q to have value %q instead of %q", label, want[label], val))
			}
		case packageLabel, channelsLabel:
			if val == "" {
				errs = append(errs, fmt.Errorf("Expecting annotation %q to have non-empty value", label))
			}
		case channelDefaultLabel:
			if ok && val == "" {
				errs = append(errs, fmt.Errorf("Expecting annotation %q to have non-empty value", label))
			}
		}
	}
	return errs
}

// bundleMediaType is registry+v1 when the manifests hold a CSV, plain+v1 otherwise.
func bundleMediaType(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	files := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		files++
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", fmt.Errorf("Unable to read file %s in bundle", e.Name())
		}
		var u unstructured.Unstructured
		if yamlUnmarshal(data, &u.Object) == nil && u.GetKind() == "ClusterServiceVersion" {
			return "registry+v1", nil
		}
	}
	if files == 0 {
		return "", fmt.Errorf("The directory %s contains no yaml files", dir)
	}
	return "plain+v1", nil
}

// olmCRDsHaveValidation is olm-crds-have-validation: every spec and status field of every example is in
// the schema of its CRD.
func olmCRDsHaveValidation(b *manifests.Bundle) scorecardResult {
	r := newResult()
	crs, err := almExamples(b.CSV)
	if err != nil {
		r.fail(errorState, err.Error())
		return r
	}
	for _, cr := range crs {
		gvk := cr.GroupVersionKind()
		for _, crd := range b.V1CRDs {
			for _, version := range crd.Spec.Versions {
				if !strings.EqualFold(gvk.Version, version.Name) || !sameKind(gvk.Kind, crd.Spec.Names.Kind) {
					continue
				}
				if version.Schema == nil {
					r.suggestions = append(r.suggestions, fmt.Sprintf("Add CRD validation for %s/%s", crd.Spec.Names.Kind, version.Name))
					continue
				}
				failed := false
				for _, block := range []string{"spec", "status"} {
					fields, _ := cr.Object[block].(map[string]any)
					for key := range fields {
						if _, ok := schemaOf(version, block).Properties[key]; !ok {
							failed = true
							r.suggestions = append(r.suggestions, fmt.Sprintf("Add CRD validation for %s field `%s` in %s/%s", block, key, gvk.Kind, gvk.Version))
						}
					}
				}
				if failed {
					r.state = failState
					return r
				}
			}
		}
	}
	return r
}

func schemaOf(version apiextensionsv1.CustomResourceDefinitionVersion, block string) apiextensionsv1.JSONSchemaProps {
	return version.Schema.OpenAPIV3Schema.Properties[block]
}

// sameKind compares kinds case-insensitively. The scorecard first singularizes both through an empty
// meta.DefaultRESTMapper, which knows no kind, so it always falls back to the kinds as given (and adds a
// "could not find singular version" suggestion each time, left out here).
func sameKind(a, b string) bool { return strings.EqualFold(a, b) }

// olmCRDsHaveResources is olm-crds-have-resources: every owned CRD lists the resources it creates.
func olmCRDsHaveResources(b *manifests.Bundle) scorecardResult {
	r := newResult()
	for _, owned := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		if len(owned.Resources) == 0 {
			r.fail(failState, "Owned CRDs do not have resources specified")
			return r
		}
	}
	return r
}

// olmSpecDescriptors is olm-spec-descriptors: every top-level spec field of every example has a spec
// descriptor in the CSV.
func olmSpecDescriptors(b *manifests.Bundle) scorecardResult {
	r := newResult()
	crs, err := almExamples(b.CSV)
	if err != nil {
		r.fail(errorState, err.Error())
		return r
	}
	owned := ownedByKindVersion(b.CSV)
	for _, cr := range crs {
		spec, ok := cr.Object["spec"].(map[string]any)
		if !ok {
			r.state = failState
			continue
		}
		desc, found := owned[cr.GetKind()+"/"+cr.GroupVersionKind().Version]
		if !found {
			r.fail(failState, fmt.Sprintf("Failed to find an owned CRD for CR %s with GVK %s", cr.GetName(), cr.GroupVersionKind()))
			continue
		}
		for key := range spec {
			if !hasSpecDescriptor(desc, key) {
				r.fail(failState, fmt.Sprintf("%s does not have a spec descriptor", key))
				r.suggestions = append(r.suggestions, fmt.Sprintf("Add a spec descriptor for %s", key))
			}
		}
	}
	return r
}

func hasSpecDescriptor(desc operatorsv1alpha1.CRDDescription, path string) bool {
	for _, d := range desc.SpecDescriptors {
		if d.Path == path {
			return true
		}
	}
	return false
}

// olmStatusDescriptors is olm-status-descriptors: an example that carries a status needs status
// descriptors on its CRD; an example without one only draws a suggestion.
func olmStatusDescriptors(b *manifests.Bundle) scorecardResult {
	r := newResult()
	crs, err := almExamples(b.CSV)
	if err != nil {
		r.fail(errorState, err.Error())
		return r
	}
	owned := ownedByKindVersion(b.CSV)
	for _, cr := range crs {
		desc, found := owned[cr.GetKind()+"/"+cr.GroupVersionKind().Version]
		if !found {
			r.fail(failState, fmt.Sprintf("Failed to find an owned CRD for CR %s with GVK %s", cr.GetName(), cr.GroupVersionKind()))
			continue
		}
		status, _ := cr.Object["status"].(map[string]any)
		if len(status) == 0 {
			r.suggestions = append(r.suggestions, fmt.Sprintf("%s does not have status spec", desc.Name))
			continue
		}
		if len(desc.StatusDescriptors) == 0 {
			r.fail(failState, fmt.Sprintf("%s does not have a status descriptor", desc.Name))
		}
	}
	return r
}

func ownedByKindVersion(csv *operatorsv1alpha1.ClusterServiceVersion) map[string]operatorsv1alpha1.CRDDescription {
	owned := map[string]operatorsv1alpha1.CRDDescription{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[d.Kind+"/"+d.Version] = d
	}
	return owned
}

func requirePass(t *testing.T, name string, r scorecardResult) {
	t.Helper()
	if r.state != passState {
		t.Errorf("%s: state %s, errors %q, suggestions %q", name, r.state, r.errors, r.suggestions)
	}
	for _, s := range r.suggestions {
		t.Logf("%s suggests: %s", name, s)
	}
}

func TestScorecardBasicCheckSpec(t *testing.T) {
	r := basicCheckSpec(loadBundle(t))
	requirePass(t, "basic-check-spec", r)
	if len(r.suggestions) > 0 {
		t.Errorf("basic-check-spec: an example has no spec: %q", r.suggestions)
	}
}

func TestScorecardOLMBundleValidation(t *testing.T) {
	r := olmBundleValidation(bundleDir)
	requirePass(t, "olm-bundle-validation", r)
	if len(r.suggestions) > 0 {
		t.Errorf("olm-bundle-validation: the default validators warn: %q", r.suggestions)
	}
}

func TestScorecardOLMCRDsHaveValidation(t *testing.T) {
	requirePass(t, "olm-crds-have-validation", olmCRDsHaveValidation(loadBundle(t)))
}

func TestScorecardOLMCRDsHaveResources(t *testing.T) {
	requirePass(t, "olm-crds-have-resources", olmCRDsHaveResources(loadBundle(t)))
}

func TestScorecardOLMSpecDescriptors(t *testing.T) {
	requirePass(t, "olm-spec-descriptors", olmSpecDescriptors(loadBundle(t)))
}

func TestScorecardOLMStatusDescriptors(t *testing.T) {
	requirePass(t, "olm-status-descriptors", olmStatusDescriptors(loadBundle(t)))
}

// The checks must be able to fail: each one is run on a bundle broken in the way it looks for.
func TestScorecardChecksFailOnBrokenBundles(t *testing.T) {
	broken := func(mutate func(b *manifests.Bundle)) *manifests.Bundle {
		b := loadBundle(t)
		mutate(b)
		return b
	}
	setExamples := func(b *manifests.Bundle, crs ...map[string]any) {
		data, err := json.Marshal(crs)
		if err != nil {
			t.Fatal(err)
		}
		b.CSV.Annotations["alm-examples"] = string(data)
	}
	cluster := func(spec, status map[string]any) map[string]any {
		cr := map[string]any{"apiVersion": "operator.gnmic.dev/v1alpha1", "kind": "Cluster", "metadata": map[string]any{"name": "c"}}
		if spec != nil {
			cr["spec"] = spec
		}
		if status != nil {
			cr["status"] = status
		}
		return cr
	}
	cases := map[string]scorecardResult{
		"olm-crds-have-validation with an unknown spec field": olmCRDsHaveValidation(broken(func(b *manifests.Bundle) {
			setExamples(b, cluster(map[string]any{"image": "x", "noSuchField": 1}, nil))
		})),
		"olm-crds-have-resources without resources": olmCRDsHaveResources(broken(func(b *manifests.Bundle) {
			b.CSV.Spec.CustomResourceDefinitions.Owned[0].Resources = nil
		})),
		"olm-spec-descriptors without a descriptor": olmSpecDescriptors(broken(func(b *manifests.Bundle) {
			setExamples(b, cluster(map[string]any{"image": "x", "noDescriptor": 1}, nil))
		})),
		"olm-status-descriptors without descriptors": olmStatusDescriptors(broken(func(b *manifests.Bundle) {
			for i := range b.CSV.Spec.CustomResourceDefinitions.Owned {
				b.CSV.Spec.CustomResourceDefinitions.Owned[i].StatusDescriptors = nil
			}
			setExamples(b, cluster(map[string]any{"image": "x"}, map[string]any{"readyReplicas": 1}))
		})),
	}
	for name, r := range cases {
		if r.state == passState {
			t.Errorf("%s: passed, want a failure", name)
		}
	}
	if r := basicCheckSpec(broken(func(b *manifests.Bundle) { setExamples(b, cluster(nil, nil)) })); len(r.suggestions) == 0 {
		t.Error("basic-check-spec: no suggestion for an example without spec")
	}
	dir := t.TempDir()
	if errs := validateBundleFormat(dir); len(errs) == 0 {
		t.Error("olm-bundle-validation: an empty directory passed the bundle format check")
	}
}
