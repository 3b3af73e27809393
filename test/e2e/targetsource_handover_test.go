//go:build e2e

package e2e_test

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// targetSourceHandoverResult is what test/e2e/results/targetsource-handover.json holds.
type targetSourceHandoverResult struct {
	Devices         int     `json:"devices"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	// FetchesSteady were made in SteadySeconds before the kill, all by the leader.
	FetchesSteady int     `json:"fetchesSteady"`
	SteadySeconds float64 `json:"steadySeconds"`
	// MinFetchGapSeconds is the shortest time between the starts of two fetches, over the whole run.
	MinFetchGapSeconds float64 `json:"minFetchGapSeconds"`
	Removed            int     `json:"devicesRemovedBeforeKill"`
	Added              int     `json:"devicesAdded"`
	// CreatedAtKill of the AddedBeforeKill devices' Targets existed when the leader was killed: it died in the
	// middle of the sync creating them.
	AddedBeforeKill int `json:"devicesAddedBeforeKill"`
	CreatedAtKill   int `json:"targetsCreatedAtKill"`
	// From the SIGKILL of the leader to the other replica's Lease, its first fetch, and the deletion of the
	// removed devices' Targets (their last miss).
	SecondsToLease       float64 `json:"secondsFromKillToLease"`
	SecondsToFirstFetch  float64 `json:"secondsFromKillToFirstFetchOfNewLeader"`
	SecondsToDeletion    float64 `json:"secondsFromKillToDeletions"`
	SecondsToConverged   float64 `json:"secondsFromKillToInventoryMatched"`
	SyncsThroughHandover []int64 `json:"syncsThroughHandover"`
	// NewLeaderIsOtherReplica: the other replica took the Lease, not the killed pod's restarted container.
	NewLeaderIsOtherReplica bool `json:"newLeaderIsTheOtherReplica"`
}

// A TargetSource pulling a NetBox-shaped inventory that the test serves (the emulated operator pods share the
// host's network) under the manifests' two replicas with leader election: the inventory sees who fetches (the
// socket table says which replica's process holds each connection).
var _ = Describe("TargetSource synced by one of two replicas, handed over when the leader is killed", Ordered, func() {
	const (
		ns       = "tsrc-handover"
		name     = "netbox"
		devices  = 300
		interval = 10 * time.Second // the least spec.http.interval takes
		misses   = 3
		removed  = 30
		// Devices added: the first addedBeforeKill before the leader is killed in the middle of the sync that
		// creates their Targets, the others after.
		addedBeforeKill = 300
		added           = 330
		// An interval counts from the end of the last attempt, which status keeps to the second: two fetches of
		// one replica start at least interval - 1s apart.
		minGap = interval - time.Second
	)
	var (
		inventory *fakenetbox.Server
		leader    harness.LeaderLease
		result    = targetSourceHandoverResult{Devices: devices, IntervalSeconds: interval.Seconds()}
	)

	targets := func(g Gomega) map[string]bool {
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		out := map[string]bool{}
		for _, t := range list.Items {
			out[t.Name] = true
		}
		return out
	}
	source := func(g Gomega) operatorv1alpha1.TargetSourceStatus {
		var ts operatorv1alpha1.TargetSource
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &ts)).To(Succeed())
		return ts.Status
	}

	BeforeAll(func() {
		inventory = fakenetbox.Start(devices, "")
		DeferCleanup(inventory.Close)
		inventory.IdentifyClients(cp.OperatorReplicaOfRequest)
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8sClient.Create(ctx, harness.NetBoxTargetSource(ns, name, inventory.DevicesURL(100), interval, misses))).To(Succeed())
		// The suite's other scenarios share the operator (and measure its load): nothing is left syncing once
		// the inventories close (cleanups run last first).
		DeferCleanup(func() { Expect(harness.DeleteTargetSources(ctx, k8sClient, ns)).To(Succeed()) })
	})

	It("makes every device a Target, and over several intervals only the leader fetches, once an interval", func() {
		want := map[string]bool{}
		for id := 1; id <= devices; id++ {
			want[fmt.Sprintf("dev-%05d", id)] = true
		}
		Eventually(targets).WithTimeout(time.Minute).Should(Equal(want))

		var err error
		leader, err = cp.OperatorLeader(ctx)
		Expect(err).NotTo(HaveOccurred())
		steadyFrom := time.Now()
		Eventually(func() int { return len(inventory.FetchesSince(steadyFrom)) }).
			WithTimeout(6 * interval).WithPolling(time.Second).Should(BeNumerically(">=", 5))
		steady := time.Since(steadyFrom)

		fetches := inventory.Fetches()
		leaderProcess := leaderProcessOf(leader)
		for _, f := range fetches {
			Expect(f.Client).To(Equal(leaderProcess), "a fetch at %s was not the leader's", f.At.Format(time.StampMilli))
			Expect(f.Status).To(Equal(200))
		}
		Expect(fakenetbox.ShortestFetchGap(fetches, "", time.Time{})).To(BeNumerically(">=", minGap), "two fetches closer than an interval: %v", fakenetbox.FetchLog(fetches))
		// Every fetch was one sync, counted once.
		Eventually(func(g Gomega) {
			g.Expect(source(g).Syncs).To(BeEquivalentTo(len(inventory.Fetches())))
		}).WithTimeout(interval).Should(Succeed())
		result.FetchesSteady = len(inventory.FetchesSince(steadyFrom))
		result.SteadySeconds = steady.Round(100 * time.Millisecond).Seconds()
		AddReportEntry("fetches in the steady state", fmt.Sprintf("%d fetches in %s, all by %s, the leader; interval %s",
			result.FetchesSteady, steady.Round(time.Second), leaderProcess, interval))
	})

	It("hands over on a SIGKILL of the leader while devices go and come: no Target deleted before its misses, none recreated, the miss count carried on", func() {
		history, err := cp.RecordTargets(ctx, ns)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(history.Stop)
		Eventually(func() int { return len(history.Live()) }).WithTimeout(10 * time.Second).Should(Equal(devices))
		before := history.Live()

		By("removing devices and waiting for the leader to mark their Targets missing")
		var gone []int
		for id := 1; id <= removed; id++ {
			gone = append(gone, id*devices/removed) // spread over the pages
		}
		inventory.Remove(gone...)
		var marked string
		Eventually(func(g Gomega) {
			seen := map[string]string{}
			for _, e := range history.Targets() {
				seen[e.Name] = e.MissingSince
			}
			for _, id := range gone {
				g.Expect(seen[fmt.Sprintf("dev-%05d", id)]).NotTo(BeEmpty(), "device %d not marked missing yet", id)
			}
			marked = seen[fmt.Sprintf("dev-%05d", gone[0])]
		}).WithTimeout(2 * interval).Should(Succeed())
		markedAt, err := strconv.ParseInt(marked, 10, 64)
		Expect(err).NotTo(HaveOccurred())

		By("adding devices, and killing the leader " + leader.Pod + " once its sync has created the first of their Targets")
		for id := devices + 1; id <= devices+addedBeforeKill; id++ {
			inventory.Put(fakenetbox.NewDevice(id))
		}
		newTargets := func() int {
			n := 0
			for name := range history.Live() {
				if _, existed := before[name]; !existed {
					n++
				}
			}
			return n
		}
		Eventually(newTargets).WithTimeout(2 * interval).WithPolling(5 * time.Millisecond).Should(BeNumerically(">", 0))
		pid, err := cp.KillOperatorReplica(ctx, leader.Pod)
		Expect(err).NotTo(HaveOccurred())
		killed := time.Now()
		result.CreatedAtKill = newTargets()
		for id := devices + addedBeforeKill + 1; id <= devices+added; id++ {
			inventory.Put(fakenetbox.NewDevice(id))
		}

		var next harness.LeaderLease
		Eventually(func(g Gomega) {
			next, err = cp.OperatorLeader(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(next.Holder).NotTo(BeEmpty())
			g.Expect(next.Holder).NotTo(Equal(leader.Holder))
		}).WithTimeout(leader.Duration + time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		result.SecondsToLease = next.AcquireTime.Sub(killed).Round(100 * time.Millisecond).Seconds()
		// The other replica, or the killed pod's restarted container (a process of its own), may win the Lease.
		result.NewLeaderIsOtherReplica = next.Pod != leader.Pod

		want := map[string]bool{}
		for id := 1; id <= devices+added; id++ {
			if !slices.Contains(gone, id) {
				want[fmt.Sprintf("dev-%05d", id)] = true
			}
		}
		Eventually(func(g Gomega) {
			g.Expect(history.Live()).To(HaveLen(len(want)))
			g.Expect(targets(g)).To(Equal(want))
			g.Expect(source(g).TargetsMissing).To(BeZero())
		}).WithTimeout(leader.Duration + 4*interval + 30*time.Second).Should(Succeed())
		result.SecondsToConverged = time.Since(killed).Round(100 * time.Millisecond).Seconds()
		history.Stop()
		Expect(history.Err()).NotTo(HaveOccurred())

		By("judging the handover from the watched Targets and TargetSource, and the inventory's fetches")
		Expect(history.Recreated()).To(BeEmpty(), "Targets deleted and created again")
		for n, uid := range before {
			if live, ok := history.Live()[n]; ok {
				Expect(live).To(Equal(uid), "Target %s replaced", n)
			}
		}
		deletions := history.Deletions()
		Expect(deletions).To(HaveLen(removed), "exactly the removed devices' Targets are deleted")
		var lastDeletion time.Time
		for _, id := range gone {
			d, ok := deletions[fmt.Sprintf("dev-%05d", id)]
			Expect(ok).To(BeTrue(), "device %d's Target not deleted", id)
			Expect(d.MissingSince).To(Equal(marked), "device %d's Target lost its mark before deletion", id)
			Expect(d.At).To(BeTemporally(">", killed), "deleted before its %d misses", misses)
			if d.At.After(lastDeletion) {
				lastDeletion = d.At
			}
		}
		result.SecondsToDeletion = lastDeletion.Sub(killed).Round(100 * time.Millisecond).Seconds()

		syncs := history.SyncsOf(name)
		result.SyncsThroughHandover = syncs
		for i := 1; i < len(syncs); i++ {
			Expect(syncs[i]).To(Equal(syncs[i-1]+1), "status.syncs went %v: neither reset nor counted twice", syncs)
		}
		// The sync that deleted them is the misses-th they were missing from, counted from the old leader's mark.
		var deletingSync int64
		for _, e := range history.Sources() {
			if e.Deleted > 0 {
				Expect(e.Deleted).To(BeEquivalentTo(removed), "the removed Targets go in one sync")
				deletingSync = e.Syncs
			}
		}
		Expect(deletingSync).To(Equal(markedAt+misses-1), "deleted at sync %d, marked at %d, %d misses", deletingSync, markedAt, misses)

		fetches := inventory.Fetches()
		oldProcess, newProcess := leader.Pod+"/"+strconv.Itoa(pid), ""
		for _, r := range cp.OperatorReplicas() {
			if r.Pod == next.Pod {
				newProcess = harness.ReplicaProcess(r)
			}
		}
		var firstNew time.Time
		for _, f := range fetches {
			if f.At.Before(killed) {
				Expect(f.Client).To(Equal(oldProcess), "a fetch before the kill at %s", f.At.Format(time.StampMilli))
				continue
			}
			Expect(f.Client).To(Equal(newProcess), "a fetch after the kill at %s", f.At.Format(time.StampMilli))
			if firstNew.IsZero() {
				firstNew = f.At
			}
		}
		Expect(fakenetbox.ShortestFetchGap(fetches, oldProcess, killed)).To(BeNumerically(">=", minGap), "two fetches closer than an interval: %v", fakenetbox.FetchLog(fetches))
		result.SecondsToFirstFetch = firstNew.Sub(killed).Round(100 * time.Millisecond).Seconds()
		result.MinFetchGapSeconds = fakenetbox.ShortestFetchGap(fetches, oldProcess, killed).Round(10 * time.Millisecond).Seconds()
		result.Removed, result.Added, result.AddedBeforeKill = removed, added, addedBeforeKill
		Expect(result.CreatedAtKill).To(BeNumerically("<", addedBeforeKill), "the kill must land in the middle of the sync creating them")
		writeResult("targetsource-handover", result)
		AddReportEntry("TargetSource handover", fmt.Sprintf("%+v", result))
	})
})

// leaderProcessOf names the process of the replica holding the Lease, as the inventory names who fetched.
func leaderProcessOf(lease harness.LeaderLease) string {
	GinkgoHelper()
	for _, r := range cp.OperatorReplicas() {
		if r.Pod == lease.Pod {
			return harness.ReplicaProcess(r)
		}
	}
	Fail("no operator pod " + lease.Pod)
	return ""
}
