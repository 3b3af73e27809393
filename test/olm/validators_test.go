package olm

import (
	"testing"

	"github.com/operator-framework/api/pkg/validation"
)

// k8sVersion is the Kubernetes release the deprecated-API validator checks the bundle against.
const k8sVersion = "1.37"

// The validators of `operator-sdk bundle validate ./bundle --select-optional suite=operatorframework
// --optional-values=k8s-version=1.37`: the default bundle validators, OperatorHub (with its standard
// capabilities and categories), good practices, and the deprecated-API check. A warning fails the test
// as an error does: the bundle has none today, and a new one must be fixed or explained in docs/olm.md
// and accepted here.
func TestBundlePassesTheOperatorFrameworkValidators(t *testing.T) {
	b := loadBundle(t)
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
	)
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": k8sVersion})
	results := validators.Validate(objs...)
	if len(results) == 0 {
		t.Fatal("the validators returned no results: nothing was validated")
	}
	for _, r := range results {
		for _, e := range r.Errors {
			t.Errorf("%s: error: %v", r.Name, e)
		}
		for _, w := range r.Warnings {
			t.Errorf("%s: warning: %v", r.Name, w)
		}
	}
}

// The validators must be able to fail: a CSV with an unknown capability level and category, and no
// maintainers, draws errors.
func TestValidatorsRejectABrokenCSV(t *testing.T) {
	b := loadBundle(t)
	b.CSV.Annotations["capabilities"] = "Magic"
	b.CSV.Annotations["categories"] = "Not A Category"
	b.CSV.Spec.Maintainers = nil
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
	)
	errs := 0
	for _, r := range validators.Validate(b.ObjectsToValidate()...) {
		errs += len(r.Errors)
	}
	if errs < 2 {
		t.Errorf("a broken CSV drew %d errors, want at least 2", errs)
	}
}
