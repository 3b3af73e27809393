package targetsource_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// devices is the inventory of the spec: 1,500 in CI; `make bench-targetsource` runs the same spec with
// 10,000 (TARGETSOURCE_DEVICES) and prints its timings and writes (the lines starting with "bench:").
var devices = devicesFromEnv(1500)

func devicesFromEnv(otherwise int) int {
	if n, err := strconv.Atoi(os.Getenv("TARGETSOURCE_DEVICES")); err == nil && n >= 1000 {
		return n
	}
	return otherwise
}

// bench prints a step's duration and writes for docs/target-sources.md.
func bench(step string, took time.Duration, writes map[string]int) {
	GinkgoWriter.Printf("bench: %-58s %8.2fs  writes %v\n", step, took.Seconds(), writes)
}

var _ = Describe("A TargetSource over a NetBox inventory", Ordered, func() {
	var (
		r      *replica
		ns     string
		netbox *fakenetbox.Server
		ts     *operatorv1alpha1.TargetSource
		before map[string]int
	)
	// hand is a Target a user made, with the name of device 7.
	hand := deviceName(7)

	BeforeAll(func() {
		r = startReplica()
		DeferCleanup(r.Stop)
		ns = newNamespace()
		netbox = fakenetbox.Start(devices, "s3cret")
		DeferCleanup(netbox.Close)
		Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hand},
			Spec: operatorv1alpha1.TargetSpec{Address: "by-hand:57400", Profile: "mine"}})).To(Succeed())
	})
	BeforeEach(func() { before = r.writes.of(ns) })

	It("creates a Target per device, owned by the TargetSource and labelled with it, and leaves a hand-made one alone", func() {
		start := time.Now()
		ts = newNetBoxSource(ns, netbox, "s3cret", nil)
		ts = waitForSyncs(ts, 1)
		bench(fmt.Sprintf("first sync of %d devices (created)", devices), time.Since(start), writesSince(r, ns, before))

		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(ts.Status.Records).To(BeEquivalentTo(devices))
		Expect(ts.Status.Targets).To(BeEquivalentTo(devices - 1))
		Expect(ts.Status.TargetsCreated).To(BeEquivalentTo(devices - 1))
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodPost: devices - 1}), "one create per device, nothing else")

		all := targets(ns)
		Expect(all).To(HaveLen(devices))
		t := all[deviceName(258)]
		Expect(t.Spec.Address).To(Equal("10.0.1.2:57400"))
		Expect(t.Spec.Profile).To(Equal("routers"))
		Expect(t.Labels).To(Equal(map[string]string{operatorv1alpha1.TargetSourceLabel: "netbox", "source": "netbox",
			"site": "dc2", "role": "leaf", "platform": "srlinux", "tag-lab": "true"}))
		Expect(metav1.GetControllerOf(&t)).To(HaveField("UID", ts.UID))

		By("reporting the hand-made Target of the same name, untouched")
		Expect(all[hand].Spec.Address).To(Equal("by-hand:57400"))
		Expect(all[hand].OwnerReferences).To(BeEmpty())
		Expect(ts.Status.TargetsConflicting).To(BeEquivalentTo(1))
		Expect(ts.Status.ConflictingTargets).To(Equal([]string{hand}))
		Expect(condition(ts, operatorv1alpha1.ConditionConflicts)).To(HaveField("Status", metav1.ConditionTrue))
		Eventually(eventsOf(ts)).Should(ContainElement(ContainSubstring(operatorv1alpha1.EventTargetsConflict + ": 1 Targets")))
	})

	It("writes nothing when nothing changed", func() {
		start := time.Now()
		ts = requestSync(ts)
		bench("sync with nothing changed", time.Since(start), writesSince(r, ns, before))
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(writesSince(r, ns, before)).To(BeEmpty())
		Expect(targets(ns)[hand].Spec.Address).To(Equal("by-hand:57400"), "a hand-made Target is never overwritten")
	})

	It("updates exactly the 100 Targets whose devices changed", func() {
		netbox.Change(func(d *fakenetbox.Device) { d.Platform.Slug = "eos" }, ids(101, 200)...)
		start := time.Now()
		ts = requestSync(ts)
		bench("sync with 100 devices changed (updated)", time.Since(start), writesSince(r, ns, before))
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodPut: 100}))
		Expect(ts.Status.TargetsUpdated).To(BeEquivalentTo(100))
		Expect(ts.Status.TargetsCreated).To(BeZero())
		all := targets(ns)
		Expect(all[deviceName(150)].Labels).To(HaveKeyWithValue("platform", "eos"))
		Expect(all[deviceName(201)].Labels).To(HaveKeyWithValue("platform", "srlinux"))
	})

	It("deletes a removed device's Target at the third sync without it, not before, and keeps one that came back", func() {
		removed := append(ids(1, 6), ids(8, 11)...) // 10 owned Targets; 7 is the hand-made one
		netbox.Remove(append(removed, 12)...)
		start := time.Now()
		ts = requestSync(ts)
		bench("sync with 11 devices removed (marked missing)", time.Since(start), writesSince(r, ns, before))
		first := ts.Status.Syncs
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodPut: 11}), "a missing mark on each")
		Expect(ts.Status.TargetsMissing).To(BeEquivalentTo(11))
		all := targets(ns)
		for _, id := range append(removed, 12) {
			Expect(all).To(HaveKey(deviceName(id)))
			Expect(all[deviceName(id)].Annotations).To(HaveKeyWithValue(operatorv1alpha1.MissingSinceAnnotation, strconv.FormatInt(first, 10)))
		}

		By("the second sync without them: device 12 is back and unmarked, the others wait")
		netbox.Put(fakenetbox.NewDevice(12))
		before = r.writes.of(ns)
		start = time.Now()
		ts = requestSync(ts)
		bench("second sync without 10 devices, 1 back (unmarked)", time.Since(start), writesSince(r, ns, before))
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodPut: 1}))
		all = targets(ns)
		Expect(all).To(HaveKey(deviceName(1)))
		Expect(all[deviceName(12)].Annotations).NotTo(HaveKey(operatorv1alpha1.MissingSinceAnnotation))
		Expect(ts.Status.TargetsMissing).To(BeEquivalentTo(10))

		By("the third sync without them deletes them")
		before = r.writes.of(ns)
		start = time.Now()
		ts = requestSync(ts)
		bench("third sync without 10 devices (deleted)", time.Since(start), writesSince(r, ns, before))
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodDelete: 10}))
		Expect(ts.Status.TargetsDeleted).To(BeEquivalentTo(10))
		Expect(ts.Status.TargetsMissing).To(BeZero())
		all = targets(ns)
		for _, id := range removed {
			Expect(all).NotTo(HaveKey(deviceName(id)))
		}
		Expect(all).To(HaveKey(deviceName(12)))
		Expect(all).To(HaveKey(hand))
	})

	It("changes nothing when the inventory fails, and says so", func() {
		netbox.Fail(http.StatusInternalServerError)
		netbox.Remove(ids(300, 399)...) // would be marked, were the answer read
		syncs := source(Default, ts).Status.Syncs
		start := time.Now()
		ts = requestSync(ts)
		bench("sync failing with HTTP 500", time.Since(start), writesSince(r, ns, before))
		Expect(writesSince(r, ns, before)).To(BeEmpty())
		Expect(ts.Status.Syncs).To(Equal(syncs), "a failed sync is not counted")
		Expect(condition(ts, operatorv1alpha1.ConditionSynced)).To(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", operatorv1alpha1.ReasonFetchFailed)))
		Expect(condition(ts, operatorv1alpha1.ConditionInventoryReachable)).To(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Message", ContainSubstring("HTTP 500"))))
		Expect(condition(ts, operatorv1alpha1.ConditionInventoryReachable).Message).NotTo(ContainSubstring("s3cret"))
		Eventually(eventsOf(ts)).Should(ContainElement(ContainSubstring(operatorv1alpha1.EventSyncFailed + ": no Target changed")))
		netbox.Fail(0)
		netbox.Put(devicesFrom(300, 399)...)
	})

	It("changes nothing on an answer cut short of its count, nor on one under half the last, and says so", func() {
		netbox.Truncate(700)
		start := time.Now()
		ts = requestSync(ts)
		bench("sync of an answer cut short at 700 devices", time.Since(start), writesSince(r, ns, before))
		Expect(writesSince(r, ns, before)).To(BeEmpty())
		Expect(condition(ts, operatorv1alpha1.ConditionSynced)).To(HaveField("Reason", operatorv1alpha1.ReasonTruncated))
		Expect(condition(ts, operatorv1alpha1.ConditionTruncated)).To(And(HaveField("Status", metav1.ConditionTrue),
			HaveField("Message", ContainSubstring(fmt.Sprintf("announced %d records and sent 700", devices-10)))))
		Eventually(eventsOf(ts)).Should(ContainElement(ContainSubstring(operatorv1alpha1.EventInventoryTruncated)))

		By("an honest answer under minRecordsPercent of the last")
		netbox.Truncate(-1)
		netbox.Remove(ids(500, devices)...)
		start = time.Now()
		ts = requestSync(ts)
		bench("sync of 499 devices, under 50% of the last", time.Since(start), writesSince(r, ns, before))
		Expect(writesSince(r, ns, before)).To(BeEmpty())
		Expect(condition(ts, operatorv1alpha1.ConditionTruncated).Message).To(ContainSubstring(fmt.Sprintf("fewer than 50%% of the last sync's %d", devices-10)))

		By("the whole inventory again")
		netbox.Put(devicesFrom(500, devices)...)
		ts = requestSync(ts)
		Expect(writesSince(r, ns, before)).To(BeEmpty())
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(condition(ts, operatorv1alpha1.ConditionTruncated).Status).To(Equal(metav1.ConditionFalse))
		Expect(ts.Status.TargetsMissing).To(BeZero())
	})

	It("makes itself the controller of every Target it made, so that deleting it deletes them", func() {
		// envtest runs no garbage collector: the owner references are what it acts on.
		owned := 0
		for _, t := range targets(ns) {
			if t.Name == hand {
				Expect(t.OwnerReferences).To(BeEmpty())
				continue
			}
			owned++
			Expect(t.OwnerReferences).To(HaveLen(1))
			ref := t.OwnerReferences[0]
			Expect(ref.Kind).To(Equal("TargetSource"))
			Expect(ref.UID).To(Equal(ts.UID))
			Expect(*ref.Controller).To(BeTrue())
			Expect(ref.BlockOwnerDeletion).To(BeNil(), "blocking would need update on targetsources/finalizers on OpenShift")
			Expect(t.Labels).To(HaveKeyWithValue(operatorv1alpha1.TargetSourceLabel, ts.Name))
		}
		Expect(owned).To(Equal(devices - 11))
		Expect(k8sClient.Delete(suiteCtx, ts)).To(Succeed())
		Consistently(func() map[string]int { return writesSince(r, ns, before) }, 2*time.Second).Should(BeEmpty())
	})
})

var _ = Describe("A TargetSource whose mapping does not compile", func() {
	It("writes nothing and names the expression, until it is fixed", func() {
		r := startReplica()
		DeferCleanup(r.Stop)
		ns := newNamespace()
		netbox := fakenetbox.Start(20, "t")
		DeferCleanup(netbox.Close)
		ts := newNetBoxSource(ns, netbox, "t", func(ts *operatorv1alpha1.TargetSource) {
			ts.Spec.Mapping.Name = "record.name +"
		})
		Eventually(func(g Gomega) {
			got := source(g, ts)
			g.Expect(condition(got, operatorv1alpha1.ConditionMappingValid)).To(And(HaveField("Status", metav1.ConditionFalse),
				HaveField("Message", ContainSubstring(`mapping.name "record.name +"`))))
			g.Expect(condition(got, operatorv1alpha1.ConditionSynced)).To(HaveField("Reason", operatorv1alpha1.ReasonMappingInvalid))
		}, 20*time.Second).Should(Succeed())
		Eventually(eventsOf(ts)).Should(ContainElement(ContainSubstring(operatorv1alpha1.EventMappingInvalid)))
		Expect(targets(ns)).To(BeEmpty())

		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := source(Default, ts)
			got.Spec.Mapping.Name = `targetName(record.site.slug + "-" + record.name)`
			return k8sClient.Update(suiteCtx, got)
		})).To(Succeed())
		ts = waitForSyncs(ts, 1)
		Expect(condition(ts, operatorv1alpha1.ConditionMappingValid).Status).To(Equal(metav1.ConditionTrue))
		Expect(targets(ns)).To(HaveKey("dc1-dev-00001"))

		By("a record that maps to an invalid label is reported; the others sync")
		netbox.Change(func(d *fakenetbox.Device) { d.Tags = append(d.Tags, fakenetbox.Ref{Slug: "not a slug!"}) }, 5)
		netbox.Change(func(d *fakenetbox.Device) { d.PrimaryIP, d.PrimaryIP4 = nil, nil }, 6)
		ts = requestSync(ts)
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(condition(ts, operatorv1alpha1.ConditionMappingValid)).To(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", operatorv1alpha1.ReasonRecordsInvalid)))
		Expect(ts.Status.RecordsInvalid).To(BeEquivalentTo(1))
		Expect(ts.Status.InvalidRecords).To(ConsistOf(ContainSubstring(`record 4 (dc1-dev-00005): label key "tag-not a slug!"`)))
		Expect(ts.Status.RecordsSkipped).To(BeEquivalentTo(1), "device 6 has no primary IP")
		Expect(ts.Status.TargetsMissing).To(BeEquivalentTo(2), "neither maps to a Target any more: both count as missing")
	})
})

var _ = Describe("A TargetSource over an inventory that sends ETags", func() {
	It("reads nothing again while every page is not modified, and still counts misses", func() {
		r := startReplica()
		DeferCleanup(r.Stop)
		ns := newNamespace()
		netbox := fakenetbox.Start(60, "t")
		DeferCleanup(netbox.Close)
		netbox.SendETags(true)
		ts := newNetBoxSource(ns, netbox, "t", func(ts *operatorv1alpha1.TargetSource) {
			ts.Spec.HTTP.URL = netbox.DevicesURL(25) // 3 pages
			ts.Spec.Sync.DeleteAfterMisses = 2
		})
		ts = waitForSyncs(ts, 1)
		before := r.writes.of(ns)
		ts = requestSync(ts)
		Expect(netbox.Requests(http.StatusNotModified)).To(Equal(3), "every page answered 304")
		Expect(condition(ts, operatorv1alpha1.ConditionSynced).Status).To(Equal(metav1.ConditionTrue))
		Expect(ts.Status.Syncs).To(BeEquivalentTo(2))
		Expect(writesSince(r, ns, before)).To(BeEmpty())

		netbox.Remove(60) // the count on every page changes: every page is read again
		ts = requestSync(ts)
		Expect(netbox.Requests(http.StatusNotModified)).To(Equal(3))
		Expect(ts.Status.TargetsMissing).To(BeEquivalentTo(1))

		By("a sync where every page answers 304 is the second miss")
		before = r.writes.of(ns)
		ts = requestSync(ts)
		Expect(netbox.Requests(http.StatusNotModified)).To(Equal(6))
		Expect(ts.Status.Records).To(BeEquivalentTo(59))
		Expect(writesSince(r, ns, before)).To(Equal(map[string]int{http.MethodDelete: 1}))
		Expect(targets(ns)).NotTo(HaveKey(deviceName(60)))
	})
})

var _ = Describe("A TargetSource woken by its provider", func() {
	It("syncs at once, before its interval", func() {
		r := startReplica()
		DeferCleanup(r.Stop)
		ns := newNamespace()
		netbox := fakenetbox.Start(30, "t")
		DeferCleanup(netbox.Close)
		ts := newNetBoxSource(ns, netbox, "t", nil) // interval: an hour
		ts = waitForSyncs(ts, 1)
		netbox.Put(fakenetbox.NewDevice(31))
		Consistently(func() int64 { return source(Default, ts).Status.Syncs }, time.Second).Should(BeEquivalentTo(1))
		r.rec.Wake(client.ObjectKeyFromObject(ts))
		ts = waitForSyncs(ts, 2)
		Expect(targets(ns)).To(HaveKey(deviceName(31)))
	})
})

var _ = Describe("TargetSources handed over between replicas", func() {
	It("count misses on from where the last replica left them, delete nothing early and create nothing twice", func() {
		a, b := startReplica(), startReplica()
		DeferCleanup(a.Stop)
		DeferCleanup(b.Stop)
		b.assigned.Store(false)
		ns := newNamespace()
		netbox := fakenetbox.Start(200, "t")
		DeferCleanup(netbox.Close)
		ts := newNetBoxSource(ns, netbox, "t", func(ts *operatorv1alpha1.TargetSource) { ts.Spec.Sync.DeleteAfterMisses = 2 })
		ts = waitForSyncs(ts, 1)
		netbox.Remove(ids(1, 5)...)
		ts = requestSync(ts)
		Expect(ts.Status.TargetsMissing).To(BeEquivalentTo(5))
		Expect(a.writes.of(ns)).To(Equal(map[string]int{http.MethodPost: 200, http.MethodPut: 5}))

		By("replica b takes the TargetSource over, with nothing in memory")
		a.assigned.Store(false)
		b.assigned.Store(true)
		aBefore := a.writes.of(ns)
		ts = requestSync(ts)
		Expect(b.writes.of(ns)).To(Equal(map[string]int{http.MethodDelete: 5}), "the second miss, counted from a's mark")
		Expect(ts.Status.Syncs).To(BeEquivalentTo(3))
		Expect(targets(ns)).To(HaveLen(195))
		Expect(writesSince(a, ns, aBefore)).To(BeEmpty(), "a replica not assigned the TargetSource writes nothing")
	})
})

// syncedOnA starts two replicas, a assigned every TargetSource and b none, and a TargetSource of 20 devices that
// a synced once.
func syncedOnA() (a, b *replica, netbox *fakenetbox.Server, ts *operatorv1alpha1.TargetSource) {
	a, b = startReplica(), startReplica()
	DeferCleanup(a.Stop)
	DeferCleanup(b.Stop)
	b.assigned.Store(false)
	netbox = fakenetbox.Start(20, "t")
	DeferCleanup(netbox.Close)
	ts = newNetBoxSource(newNamespace(), netbox, "t", nil)
	return a, b, netbox, waitForSyncs(ts, 1)
}

var _ = Describe("A TargetSource that a replica gets when the members change", func() {
	It("is synced by that replica as soon as it is due, not at the replica's next look 30 s later", func() {
		a, b, netbox, ts := syncedOnA()

		By("a request that comes while a leaves and b has not joined yet: neither syncs it")
		a.assigned.Store(false)
		value := askForSync(ts)
		answered := func() string { return source(Default, ts).Status.LastSyncRequest }
		Consistently(answered, 2*time.Second).ShouldNot(Equal(value))

		By("b's shard gives it the TargetSource after a round")
		b.assigned.Store(true)
		b.membersChanged()
		Eventually(answered, 5*time.Second).Should(Equal(value))
		Expect(netbox.Fetches()).To(HaveLen(2))
	})
})

var _ = Describe("A TargetSource that two replicas both think they run", func() {
	It("is synced by one of them at a time: one fetch per sync, each sync counted once, each Target created once, nothing deleted early", func() {
		// Both replicas' shards assign it to them: members that disagree for a moment.
		a, b := startReplica(), startReplica()
		DeferCleanup(a.Stop)
		DeferCleanup(b.Stop)
		ns := newNamespace()
		netbox := fakenetbox.Start(100, "t")
		DeferCleanup(netbox.Close)
		ts := newNetBoxSource(ns, netbox, "t", func(ts *operatorv1alpha1.TargetSource) { ts.Spec.Sync.DeleteAfterMisses = 2 })
		ts = waitForSyncs(ts, 1)
		Expect(targets(ns)).To(HaveLen(100))
		syncs := func() int64 { return source(Default, ts).Status.Syncs }
		fetches := func() int { return len(netbox.Fetches()) }
		Consistently(syncs, time.Second).Should(BeEquivalentTo(1))
		Expect(fetches()).To(Equal(1), "the first sync's fetches: %v", fakenetbox.FetchLog(netbox.Fetches()))

		// Both are woken by each request; the one that records its sync first fetches, the other waits for
		// that sync's status, which answered the request.
		netbox.Remove(ids(1, 5)...)
		requestSync(ts)
		Consistently(syncs, time.Second).Should(BeEquivalentTo(2))
		Expect(fetches()).To(Equal(2), "one fetch per sync")
		Expect(targets(ns)).To(HaveLen(100), "one miss of two")
		requestSync(ts)
		Consistently(syncs, time.Second).Should(BeEquivalentTo(3))
		Expect(fetches()).To(Equal(3), "one fetch per sync")
		Expect(targets(ns)).To(HaveLen(95))
		Expect(source(Default, ts).Status.Syncing).To(BeNil(), "the sync's result clears its record")
		for _, t := range targets(ns) {
			Expect(t.OwnerReferences).To(ConsistOf(HaveField("UID", ts.UID)), "Target %s", t.Name)
		}
	})
})

var _ = Describe("A TargetSource whose sync another replica recorded", func() {
	It("waits while that replica runs, and syncs once it stopped, or once the record is older than the hold", func() {
		r := startReplica()
		DeferCleanup(r.Stop)
		ns := newNamespace()
		netbox := fakenetbox.Start(20, "t")
		DeferCleanup(netbox.Close)
		ts := newNetBoxSource(ns, netbox, "t", nil)
		ts = waitForSyncs(ts, 1)
		answered := func() string { return source(Default, ts).Status.LastSyncRequest }

		By("a running replica's sync in flight")
		other := "replica-elsewhere"
		runningMembers.Store(other, true)
		recordSyncing(ts, other, time.Now())
		value := askForSync(ts)
		Consistently(answered, 3*time.Second).ShouldNot(Equal(value))
		Expect(netbox.Fetches()).To(HaveLen(1))

		By("that replica killed in the middle of it: its Lease expires")
		runningMembers.Delete(other)
		Eventually(answered, 10*time.Second).Should(Equal(value))
		Expect(netbox.Fetches()).To(HaveLen(2))
		Expect(source(Default, ts).Status.Syncing).To(BeNil())
		Expect(source(Default, ts).Status.Syncs).To(BeEquivalentTo(2))

		By("a running replica's record older than the hold: a sync taken as stuck")
		runningMembers.Store(other, true)
		DeferCleanup(func() { runningMembers.Delete(other) })
		recordSyncing(ts, other, time.Now().Add(-11*time.Minute))
		value = askForSync(ts)
		Eventually(answered, 10*time.Second).Should(Equal(value))
		Expect(netbox.Fetches()).To(HaveLen(3))
	})

	It("is cleared by the replica it names once that replica no longer runs the TargetSource", func() {
		_, b, netbox, ts := syncedOnA()

		// b's sync could not write its result, and the TargetSource went to a: b's next look clears its record.
		recordSyncing(ts, b.name, time.Now())
		value := askForSync(ts)
		Eventually(func() string { return source(Default, ts).Status.LastSyncRequest }, 20*time.Second).Should(Equal(value))
		Expect(netbox.Fetches()).To(HaveLen(2))
	})
})

// devicesFrom are new fakenetbox devices with these ids.
func devicesFrom(first, last int) []*fakenetbox.Device {
	var out []*fakenetbox.Device
	for _, id := range ids(first, last) {
		out = append(out, fakenetbox.NewDevice(id))
	}
	return out
}
