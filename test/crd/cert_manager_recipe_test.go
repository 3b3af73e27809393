package crd_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// The documented cert-manager recipe must be what cert-manager's CRDs (v1.16.2, test/crd/testdata) and ours
// accept, and the TargetProfile must read the Secret cert-manager writes.
var _ = Describe("The cert-manager recipe for device client certificates", func() {
	It("is accepted by cert-manager's CRDs and by the operator's, and names the Secret the Certificate writes", func() {
		_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
			Paths: []string{filepath.Join(testenv.RepoRoot(), "test", "crd", "testdata", "cert-manager")},
		})
		Expect(err).NotTo(HaveOccurred())

		raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "cert-manager", "device-client-tls.yaml"))
		Expect(err).NotTo(HaveOccurred())
		kinds := map[string]*unstructured.Unstructured{}
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
			u.SetNamespace(namespace)
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "%s %s was rejected", u.GetKind(), u.GetName())
			kinds[u.GetKind()] = u
		}
		Expect(kinds).To(HaveKey("Issuer"))
		secret, _, _ := unstructured.NestedString(kinds["Certificate"].Object, "spec", "secretName")
		ref, _, _ := unstructured.NestedString(kinds["TargetProfile"].Object, "spec", "tls", "secretRef")
		Expect(ref).NotTo(BeEmpty())
		Expect(ref).To(Equal(secret), "the TargetProfile must name the Secret the Certificate writes")
	})
})
