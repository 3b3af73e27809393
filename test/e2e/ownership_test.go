//go:build e2e

package e2e_test

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// ownershipResult is what test/e2e/results/ownership.json holds.
type ownershipResult struct {
	Scenario string `json:"scenario"`
	// SecondsToCondition is from the Cluster's creation to ResourcesOwned False.
	SecondsToCondition float64 `json:"secondsFromClusterCreatedToResourcesOwnedFalse"`
	// WatchedSeconds is how long the user's objects were watched while the Cluster reconciled; Writes how
	// often either changed then and after the Cluster's deletion (0: byte for byte as created).
	WatchedSeconds float64 `json:"secondsReconciledBesideTheUsersObjects"`
	Writes         int     `json:"changesToTheUsersObjects"`
}

// The takeover of issue 46, as the shipped operator runs: a user's Service and ConfigMap named as a Cluster
// created after them stay exactly as they are while the Cluster reconciles, and after it is deleted and the
// garbage collector took what the Cluster owned.
var _ = Describe("A Cluster named as a user's Service and ConfigMap", Ordered, func() {
	fleet := harness.Fleet{Namespace: "takeover", Cluster: "db", Replicas: 2}
	result := ownershipResult{Scenario: "ownership"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: fleet.Namespace, Name: "db", Labels: map[string]string{"app": "db"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "db"},
			Ports: []corev1.ServicePort{{Name: "postgres", Port: 5432, TargetPort: intstr.FromInt32(5432)}}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fleet.Namespace, Name: "db"},
		Data: map[string]string{"dsn": "postgres://db:5432/app"}}
	var was map[string]string
	stored := func(g Gomega) map[string]string {
		out := map[string]string{}
		for _, obj := range []client.Object{&corev1.Service{}, &corev1.ConfigMap{}} {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: "db"}, obj)).To(Succeed())
			raw, err := json.Marshal(obj)
			g.Expect(err).NotTo(HaveOccurred())
			out[obj.GetObjectKind().GroupVersionKind().Kind+"/"+obj.GetName()] = string(raw)
		}
		return out
	}

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleet.Namespace}})).To(Succeed())
		Expect(cp.WaitForServiceAccount(ctx, fleet.Namespace)).To(Succeed())
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		was = stored(Default)
	})

	It("names them in ResourcesOwned False (NameTaken) and leaves them byte for byte as they are for a minute of reconciles", func() {
		created := time.Now()
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, 10)).To(Succeed())
		Eventually(func(g Gomega) {
			c := &operatorv1alpha1.Cluster{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: fleet.Cluster}, c)).To(Succeed())
			cond := meta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionResourcesOwned)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonNameTaken))
			g.Expect(cond.Message).To(ContainSubstring("ConfigMap db"))
			g.Expect(cond.Message).To(ContainSubstring("Service db"))
		}).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		result.SecondsToCondition = time.Since(created).Round(100 * time.Millisecond).Seconds()

		start := time.Now()
		Consistently(func(g Gomega) {
			now := stored(g)
			if !g.Expect(now).To(Equal(was)) {
				result.Writes++
			}
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		result.WatchedSeconds = time.Since(start).Round(time.Second).Seconds()
	})

	It("leaves them as they are once the Cluster is deleted and what it owned is collected", func() {
		Expect(k8sClient.Delete(ctx, &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: fleet.Namespace, Name: fleet.Cluster}})).To(Succeed())
		// kube-controller-manager's garbage collector deletes the Cluster's own Secrets: the user's objects,
		// which carry no reference to it, stay.
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: fleet.Namespace, Name: "db-api-ca"}, &corev1.Secret{}))
		}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(BeTrue(), "the garbage collector did not take the Cluster's Secret")
		Consistently(func(g Gomega) { g.Expect(stored(g)).To(Equal(was)) }).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())
		writeResult("ownership", result)
		Expect(result.Writes).To(BeZero())
	})
})
