package targetsource_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// resourceVersions are the Targets of the namespace, name to resourceVersion: equal maps, no Target changed.
func resourceVersions(ns string) map[string]string {
	out := map[string]string{}
	for name, t := range targets(ns) {
		out[name] = t.ResourceVersion
	}
	return out
}

var _ = Describe("A TargetSource whose inventory goes over sync.maxRecords", Ordered, func() {
	var (
		r      *replica
		ns     string
		netbox *fakenetbox.Server
		ts     *operatorv1alpha1.TargetSource
	)
	BeforeAll(func() {
		r = startReplica()
		DeferCleanup(r.Stop)
		ns = newNamespace()
		netbox = fakenetbox.Start(300, "s3cret")
		DeferCleanup(netbox.Close)
	})

	It("syncs while the inventory is within its budget", func() {
		ts = newNetBoxSource(ns, netbox, "s3cret", func(ts *operatorv1alpha1.TargetSource) { ts.Spec.Sync.MaxRecords = 300 })
		ts = waitForSyncs(ts, 1)
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(targets(ns)).To(HaveLen(300))
	})

	It("fails the sync with BudgetExceeded naming the budget, and changes no Target", func() {
		before, writes := resourceVersions(ns), r.writes.of(ns)
		netbox.Put(fakenetbox.NewDevice(301))
		ts = requestSync(ts)

		synced := condition(ts, operatorv1alpha1.ConditionSynced)
		Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		Expect(synced.Reason).To(Equal(operatorv1alpha1.ReasonBudgetExceeded))
		Expect(synced.Message).To(ContainSubstring("more than 300 records (sync.maxRecords)"))
		Expect(ts.Status.BudgetExceededSyncs).To(BeEquivalentTo(1))
		Expect(ts.Status.Syncs).To(BeEquivalentTo(1), "a sync over budget is not a successful sync")
		Expect(ts.Status.Records).To(BeEquivalentTo(300), "the counts of the last successful sync stay")
		Expect(writesSince(r, ns, writes)).To(BeEmpty())
		Expect(resourceVersions(ns)).To(Equal(before))
		Eventually(eventsOf(ts), 10*time.Second, 100*time.Millisecond).Should(ContainElement(
			And(HavePrefix(operatorv1alpha1.EventBudgetExceeded+": "), ContainSubstring("sync.maxRecords"))))
	})

	It("counts the syncs over budget in a row, for the backoff, and forgets them at the first sync within it", func() {
		ts = requestSync(ts)
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Reason).To(Equal(operatorv1alpha1.ReasonBudgetExceeded))
		Expect(ts.Status.BudgetExceededSyncs).To(BeEquivalentTo(2))

		netbox.Remove(301)
		ts = requestSync(ts)
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(ts.Status.BudgetExceededSyncs).To(BeZero())
	})

	It("fails a sync whose mapping runs past sync.mappingTimeout, and changes no Target", func() {
		before := resourceVersions(ns)
		cur := source(Default, ts)
		// Each record runs to its CEL cost limit (about 0.1s): 300 records take far longer than a second.
		cur.Spec.Mapping.Name = `string(lists.range(100000).map(i, lists.range(100).map(j, i*j)).size()) + targetName(record.name)`
		cur.Spec.Sync.MappingTimeout = &metav1.Duration{Duration: time.Second}
		Expect(k8sClient.Update(suiteCtx, cur)).To(Succeed())
		Eventually(func(g Gomega) {
			got := source(g, ts)
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			synced := condition(got, operatorv1alpha1.ConditionSynced)
			g.Expect(synced.Reason).To(Equal(operatorv1alpha1.ReasonBudgetExceeded))
			g.Expect(synced.Message).To(ContainSubstring("(sync.mappingTimeout)"))
		}, time.Minute, 100*time.Millisecond).Should(Succeed())
		Expect(resourceVersions(ns)).To(Equal(before))
		Expect(k8sClient.Delete(suiteCtx, source(Default, ts), client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	})
})
