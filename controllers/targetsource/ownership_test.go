package targetsource_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// docs/security.md, "Ownership": a TargetSource writes only the Targets it made, or that are handed to it.
var _ = Describe("A TargetSource whose inventory names a Target it did not make", Ordered, func() {
	var (
		r      *replica
		ns     string
		netbox *fakenetbox.Server
		ts     *operatorv1alpha1.TargetSource
	)
	hand := deviceName(3)
	stored := func() string {
		var t operatorv1alpha1.Target
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: hand}, &t)).To(Succeed())
		raw, err := json.Marshal(&t)
		Expect(err).NotTo(HaveOccurred())
		return string(raw)
	}

	BeforeAll(func() {
		r = startReplica()
		DeferCleanup(r.Stop)
		ns = newNamespace()
		netbox = fakenetbox.Start(10, "s3cret")
		DeferCleanup(netbox.Close)
		Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hand},
			Spec: operatorv1alpha1.TargetSpec{Address: "by-hand:57400", Profile: "mine"}})).To(Succeed())
	})

	It("leaves it byte for byte as it is and says so in ResourcesOwned False (NameTaken), sync after sync", func() {
		was := stored()
		ts = waitForSyncs(newNetBoxSource(ns, netbox, "s3cret", nil), 1)
		ts = requestSync(ts)
		Expect(stored()).To(Equal(was))
		c := condition(ts, operatorv1alpha1.ConditionResourcesOwned)
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonNameTaken))
		Expect(c.Message).To(ContainSubstring("Target " + hand))
		Expect(c.Message).To(ContainSubstring(operatorv1alpha1.OwnerAnnotation + "=TargetSource/netbox"))
		Expect(targets(ns)[deviceName(4)].Annotations).To(HaveKeyWithValue(operatorv1alpha1.OwnerAnnotation, "TargetSource/netbox"))
	})

	It("takes it over at the next sync once its owner annotation hands it to the TargetSource", func() {
		var t operatorv1alpha1.Target
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: hand}, &t)).To(Succeed())
		t.Annotations = map[string]string{operatorv1alpha1.OwnerAnnotation: "TargetSource/netbox"}
		Expect(k8sClient.Update(suiteCtx, &t)).To(Succeed())
		ts = requestSync(ts)
		taken := targets(ns)[hand]
		Expect(metav1.IsControlledBy(&taken, ts)).To(BeTrue())
		Expect(taken.Spec.Address).NotTo(Equal("by-hand:57400"))
		Expect(ts.Status.TargetsConflicting).To(BeZero())
		c := condition(ts, operatorv1alpha1.ConditionResourcesOwned)
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonResourcesOwned))
	})
})
