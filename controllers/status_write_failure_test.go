package controllers_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// A Target whose status cannot be written holds back neither its Cluster's status nor its Pipelines' reports,
// which do not depend on it: the reconcile reports them, then returns the Target's error for a retry.
var _ = Describe("A Target status write that fails", func() {
	It("does not hold back the Cluster's status or its Pipelines' reports", func() {
		f := newFleetOf(2)
		f.addTargets(0, 2)
		op := startOperator()
		DeferCleanup(func() { op.Stop() })
		f.convergedCollecting(2)

		refused := targetName(2)
		refuseTargetStatusWrites(f, refused)
		f.addTargets(2, 1)
		// The refused Target runs: its first status entry is due, and every write of it is refused.
		Eventually(func() []string {
			var running []string
			for _, names := range f.holdings() {
				running = append(running, names...)
			}
			return running
		}).WithTimeout(30 * time.Second).Should(ContainElement(refused))
		Consistently(func() operatorv1alpha1.TargetClusterState { return f.clusterStates()[refused] }).
			WithTimeout(3*time.Second).Should(BeZero(), "the refused Target's status")

		f.addTargets(3, 2)
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.TargetsCount).To(BeEquivalentTo(5), "the Cluster's targets")
			var p operatorv1alpha1.Pipeline
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "all"}, &p)).To(Succeed())
			g.Expect(p.Status.TargetsCount).To(BeEquivalentTo(5), "the Pipeline's targets")
			states := f.clusterStates()
			for _, name := range []string{targetName(3), targetName(4)} {
				g.Expect(states[name].State).To(Equal(operatorv1alpha1.TargetAssigned), "target %s", name)
			}
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(f.clusterStates()[refused]).To(BeZero(), "the refused Target's status")
	})
})

// refuseTargetStatusWrites makes kube-apiserver refuse every write of the named Target's status in the fleet's
// namespace (a ValidatingAdmissionPolicy), and returns once the policy is in force.
func refuseTargetStatusWrites(f *fleet, name string) {
	const probe = "status-write-probe"
	policyName := fmt.Sprintf("refuse-target-status-%s", f.ns)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{operatorv1alpha1.GroupVersion.Group},
							APIVersions: []string{"*"}, Resources: []string{"targets/status"}},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("!(object.metadata.name in [%q, %q])", name, probe),
				Message:    "status writes of this Target are refused by the test",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policyName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": f.ns}}},
		},
	}
	Expect(k8sClient.Create(suiteCtx, policy)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, binding)).To(Succeed())
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, policy))).To(Succeed())
	})

	// A Target no Pipeline selects, whose status writes the policy refuses once it is in force.
	t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: probe, Namespace: f.ns},
		Spec: operatorv1alpha1.TargetSpec{Address: "10.255.255.1:57400", Profile: "routers"}}
	Expect(k8sClient.Create(suiteCtx, t)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(t), t)).To(Succeed())
		t.Status.ClusterStates = map[string]operatorv1alpha1.TargetClusterState{"probe": {State: operatorv1alpha1.TargetUnassigned}}
		err := k8sClient.Status().Update(suiteCtx, t)
		g.Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "the probe's status write: %v", err)
	}).WithTimeout(30 * time.Second).Should(Succeed())
}
