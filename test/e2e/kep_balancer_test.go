//go:build e2e

package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// The Balancers of config/samples/kep-balancer are written with the Kubernetes Balancer KEP's field names
// (policyName, priorities, proportions); a user applies them with kubectl, unchanged.
var _ = Describe("The KEP's Balancer examples applied with kubectl", Ordered, func() {
	const ns = "kep-balancer"
	examples := filepath.Join(harness.RepoRoot(), "config", "samples", "kep-balancer")

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(cp.WaitForServiceAccount(ctx, ns)).To(Succeed())
	})

	It("are accepted as written and balance their Deployments' pods", func() {
		out, err := cp.Kubectl(ctx, "apply", "-n", ns, "-f", examples)
		Expect(err).NotTo(HaveOccurred(), "kubectl apply -f %s:\n%s", examples, out)
		DeferCleanup(func() {
			out, err := cp.Kubectl(ctx, "delete", "-n", ns, "-f", examples, "--wait=false")
			Expect(err).NotTo(HaveOccurred(), string(out))
		})

		// proportional.yaml: 6 replicas 2:1 over two zones; priority.yaml: 5 replicas, spot first up to its
		// maximum of 3, on-demand its minimum of 1 and the rest.
		want := map[string]int32{"web-zone-a": 4, "web-zone-b": 2, "batch-spot": 3, "batch-on-demand": 2}
		Eventually(func(g Gomega) {
			for deployment, replicas := range want {
				g.Expect(poolReplicas(g, ns, deployment)).To(Equal(replicas), deployment)
			}
			g.Expect(readyPods(g, ns, map[string]string{"app": "web", "zone": "zone-a"})).To(Equal(4))
			g.Expect(readyPods(g, ns, map[string]string{"app": "web", "zone": "zone-b"})).To(Equal(2))
			g.Expect(readyPods(g, ns, map[string]string{"app": "batch", "pool": "spot"})).To(Equal(3))
			g.Expect(readyPods(g, ns, map[string]string{"app": "batch", "pool": "on-demand"})).To(Equal(2))
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			for name, total := range map[string]int32{"web": 6, "batch": 5} {
				b := getBalancer(g, ns, name)
				g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionBalanced)).To(BeTrue(), "%s: %v", name, b.Status.Conditions)
				g.Expect(b.Status.Replicas).To(Equal(total), name)
				g.Expect(b.Status.ReadyReplicas).To(Equal(total), name)
			}
		}).WithTimeout(time.Minute).Should(Succeed())

		out, err = cp.Kubectl(ctx, "get", "balancers", "-n", ns)
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).To(MatchRegexp(`(?m)^web\s+proportional\s+6\s+6\s+6\s+True\s`))
		Expect(string(out)).To(MatchRegexp(`(?m)^batch\s+priority\s+5\s+5\s+5\s+True\s`))
	})

	It("are refused spelled with the old names: name, priority, proportional", func() {
		old := strings.NewReplacer("policyName:", "name:", "priorities:", "priority:", "proportions:", "proportional:")
		for _, file := range []string{"proportional.yaml", "priority.yaml"} {
			raw, err := os.ReadFile(filepath.Join(examples, file))
			Expect(err).NotTo(HaveOccurred())
			path := filepath.Join(GinkgoT().TempDir(), file)
			Expect(os.WriteFile(path, []byte(old.Replace(string(raw))), 0o644)).To(Succeed())
			out, err := cp.Kubectl(ctx, "apply", "--dry-run=server", "-n", ns, "-f", path)
			Expect(err).To(HaveOccurred(), "the old spelling of %s was accepted:\n%s", file, out)
			Expect(string(out)).To(ContainSubstring(`unknown field "spec.policy.name"`), file)
		}
	})
})

// readyPods counts the namespace's pods with these labels that are not terminating and are Ready.
func readyPods(g Gomega, ns string, labels map[string]string) int {
	var pods corev1.PodList
	g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
	ready := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready
}
