package targetsource_test

import (
	"net/http"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// gnmicProfile sets a NetBox device's custom field gnmic_profile, which the netbox preset reads.
func gnmicProfile(profile string) func(*fakenetbox.Device) {
	return func(d *fakenetbox.Device) { d.CustomFields["gnmic_profile"] = profile }
}

var _ = Describe("A TargetSource whose inventory chooses the TargetProfiles", func() {
	It("creates no Target for a device choosing a profile outside allowedProfiles, names it in invalidRecords, and treats an existing Target of one as missing", func() {
		r := startReplica()
		DeferCleanup(r.Stop)
		ns := newNamespace()
		netbox := fakenetbox.Start(20, "t")
		DeferCleanup(netbox.Close)
		netbox.Change(gnmicProfile("srl"), 3)
		netbox.Change(gnmicProfile("admin"), 4)
		ts := newNetBoxSource(ns, netbox, "t", func(ts *operatorv1alpha1.TargetSource) {
			ts.Spec.Mapping.AllowedProfiles = []string{"srl"}
		})
		ts = waitForSyncs(ts, 1)

		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue), "the other records sync")
		all := targets(ns)
		Expect(all).To(HaveLen(19))
		Expect(all).NotTo(HaveKey(deviceName(4)), "device 4 chose the profile admin")
		Expect(all[deviceName(3)].Spec.Profile).To(Equal("srl"), "srl is allowed")
		Expect(all[deviceName(5)].Spec.Profile).To(Equal("routers"), "defaults.profile is always allowed")
		refused := `record 3 (dev-00004): profile "admin" is not in mapping.allowedProfiles (allowed: routers, srl)`
		Expect(ts.Status.RecordsInvalid).To(BeEquivalentTo(1))
		Expect(ts.Status.InvalidRecords).To(Equal([]string{refused}))
		Expect(condition(ts, operatorv1alpha1.ConditionMappingValid)).To(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", operatorv1alpha1.ReasonRecordsInvalid), HaveField("Message", ContainSubstring(refused))))

		By("a device whose Target exists choosing a profile outside allowedProfiles: its Target keeps its profile and counts as missing")
		netbox.Change(gnmicProfile("admin"), 5)
		before := r.writes.of(ns)
		ts = requestSync(ts)
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodPut: 1}), "the missing mark, nothing else")
		t := targets(ns)[deviceName(5)]
		Expect(t.Spec.Profile).To(Equal("routers"))
		Expect(t.Annotations).To(HaveKeyWithValue(operatorv1alpha1.MissingSinceAnnotation, strconv.FormatInt(ts.Status.Syncs, 10)))
		Expect(ts.Status.TargetsMissing).To(BeEquivalentTo(1))
		Expect(ts.Status.InvalidRecords).To(ConsistOf(refused,
			`record 4 (dev-00005): profile "admin" is not in mapping.allowedProfiles (allowed: routers, srl)`))

		By("admin listed in allowedProfiles: both devices get it")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := source(Default, ts)
			got.Spec.Mapping.AllowedProfiles = []string{"srl", "admin"}
			return k8sClient.Update(suiteCtx, got)
		})).To(Succeed())
		Eventually(func(g Gomega) {
			got := source(g, ts)
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(got.Status.RecordsInvalid).To(BeZero())
		}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
		all = targets(ns)
		Expect(all[deviceName(4)].Spec.Profile).To(Equal("admin"))
		Expect(all[deviceName(5)].Spec.Profile).To(Equal("admin"))
		Expect(all[deviceName(5)].Annotations).NotTo(HaveKey(operatorv1alpha1.MissingSinceAnnotation))
	})
})
