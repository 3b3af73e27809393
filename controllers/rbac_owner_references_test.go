package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// The one permission the reconcile of "The operator with only the permissions config/default grants it" does
// not send (grantedUnsent), proven on a kube-apiserver of its own that runs the admission plugin needing it.
var _ = Describe("Owner references where OwnerReferencesPermissionEnforcement runs (OpenShift)", Ordered, func() {
	var (
		admin, asOperator client.Client
		install           *operatorInstall
		cluster           *operatorv1alpha1.Cluster
	)

	BeforeAll(func() {
		env, restConfig, err := testenv.Start(testenv.Options{APIServerArgs: map[string]string{
			"enable-admission-plugins": "OwnerReferencesPermissionEnforcement",
		}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		admin, err = client.New(restConfig, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		install = renderOperatorInstall()
		install.applyWith(admin)
		asOperator, err = client.New(install.restConfigFor(restConfig, nil), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())

		Expect(admin.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "owned"}})).To(Succeed())
		cluster = &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "owned", Name: "edge"}}
		cluster.Spec.Image = "ghcr.io/openconfig/gnmic:test"
		Expect(admin.Create(suiteCtx, cluster)).To(Succeed())
	})

	// owned is a ConfigMap the Cluster controls, as controllerutil.SetControllerReference sets it: with
	// blockOwnerDeletion.
	owned := func(name string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "owned", Name: name,
			Labels: map[string]string{operatorv1alpha1.ClusterLabel: cluster.Name}}}
		Expect(controllerutil.SetControllerReference(cluster, cm, scheme)).To(Succeed())
		Expect(*cm.OwnerReferences[0].BlockOwnerDeletion).To(BeTrue())
		return cm
	}

	It("let the operator make the objects its Clusters own", func() {
		Expect(asOperator.Create(suiteCtx, owned("edge-bootstrap"))).To(Succeed())
	})

	It("would not, without update on clusters/finalizers", func() {
		role := &rbacv1.ClusterRole{}
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := admin.Get(suiteCtx, client.ObjectKey{Name: managerRoleName(install)}, role); err != nil {
				return err
			}
			// controller-gen groups resources with the same verbs in one rule: take clusters/finalizers out of
			// whichever rule grants it, and keep the rest of that rule.
			var kept []rbacv1.PolicyRule
			removed := 0
			for _, r := range role.Rules {
				var resources []string
				for _, res := range r.Resources {
					if res == "clusters/finalizers" {
						removed++
						continue
					}
					resources = append(resources, res)
				}
				if len(resources) > 0 {
					r.Resources = resources
					kept = append(kept, r)
				}
			}
			Expect(removed).To(Equal(1), "one rule grants update on clusters/finalizers")
			role.Rules = kept
			return admin.Update(suiteCtx, role)
		})).To(Succeed())
		Eventually(func(g Gomega) {
			err := asOperator.Create(suiteCtx, owned("edge-other"), client.DryRunAll)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring("blockOwnerDeletion"))
		}, 10*time.Second).Should(Succeed())
	})
})

// managerRoleName is the name of the ClusterRole `make manifests` generates, as config/default renders it.
func managerRoleName(install *operatorInstall) string {
	for _, obj := range install.objects {
		if obj.GetKind() == "ClusterRole" && obj.GetName() == "gnmic-operator-manager-role" {
			return obj.GetName()
		}
	}
	Fail("config/default has no ClusterRole gnmic-operator-manager-role")
	return ""
}
