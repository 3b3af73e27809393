package controllers_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// kepExamples is the directory of the Balancers written with the Kubernetes Balancer KEP's field names.
var kepExamples = filepath.Join(testenv.RepoRoot(), "config", "samples", "kep-balancer")

// oldSpelling turns a manifest of the KEP's policy field names into the names this API had before it took
// the KEP's: policyName was name, priorities was priority, proportions was proportional.
var oldSpelling = strings.NewReplacer("policyName:", "name:", "priorities:", "priority:", "proportions:", "proportional:")

var _ = Describe("The KEP's Balancer examples", Ordered, ContinueOnFailure, func() {
	BeforeAll(runBalancerOperator)

	It("are applied with kubectl as written, and balance their Deployments", func() {
		w := newWorkloads()
		out, err := kubectl("apply", "-n", w.ns, "-f", kepExamples)
		Expect(err).NotTo(HaveOccurred(), "kubectl apply -f %s:\n%s", kepExamples, out)
		// Operators that later specs start must not act on them.
		DeferCleanup(func() {
			for _, name := range []string{"web", "batch"} {
				b := &operatorv1alpha1.Balancer{}
				b.Namespace, b.Name = w.ns, name
				Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, b))).To(Succeed())
			}
		})

		// proportional.yaml: 6 replicas, 2:1, each zone at least 1.
		// priority.yaml: 5 replicas, spot first up to its maximum of 3, on-demand its minimum of 1 and the rest.
		w.expectReplicas("Deployment", map[string]int32{"web-zone-a": 4, "web-zone-b": 2, "batch-spot": 3, "batch-on-demand": 2})
		Eventually(func(g Gomega) {
			for _, name := range []string{"web", "batch"} {
				b := w.get(g, name)
				g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionBalanced)).To(BeTrue(), "%s: %v", name, b.Status.Conditions)
				g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionReplicasPlaced)).To(BeTrue(), "%s: %v", name, b.Status.Conditions)
			}
		}).Should(Succeed())
		Expect(w.targetStatus(Default, "batch", "spot").Reasons).To(ContainElement("max 3 reached"))

		out, err = kubectl("get", "balancers", "-n", w.ns)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`(?m)^web\s+proportional\s+6\s`), "the Policy column shows policyName")
		Expect(out).To(MatchRegexp(`(?m)^batch\s+priority\s+5\s`), "the Policy column shows policyName")
	})

	It("refuses them spelled with the old names: name, priority, proportional", func() {
		w := newWorkloads()
		files, err := filepath.Glob(filepath.Join(kepExamples, "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(HaveLen(2))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			old := oldSpelling.Replace(string(raw))
			Expect(old).NotTo(Equal(string(raw)))
			path := filepath.Join(GinkgoT().TempDir(), filepath.Base(f))
			Expect(os.WriteFile(path, []byte(old), 0o644)).To(Succeed())
			out, err := kubectl("apply", "--dry-run=server", "-n", w.ns, "-f", path)
			Expect(err).To(HaveOccurred(), "the old spelling of %s was accepted:\n%s", filepath.Base(f), out)
			Expect(out).To(ContainSubstring(`unknown field "spec.policy.name"`), filepath.Base(f))
		}
	})
})

// kubectl runs envtest's kubectl as a cluster administrator, as a user runs it (client-side validation
// strict, as kubectl's default is), and returns what it wrote to stdout and stderr.
func kubectl(args ...string) (string, error) {
	GinkgoHelper()
	user, err := env.AddUser(envtest.User{Name: "kubectl-admin", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	k, err := user.Kubectl()
	Expect(err).NotTo(HaveOccurred())
	stdout, stderr, runErr := k.Run(args...)
	var out bytes.Buffer
	for _, r := range []io.Reader{stdout, stderr} {
		if r != nil {
			_, _ = io.Copy(&out, r)
		}
	}
	return out.String(), runErr
}
