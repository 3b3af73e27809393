//go:build e2e

package sharding

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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

// TargetSources pulling NetBox-shaped inventories that the test serves, one server each, under the sharded
// replicas: each inventory sees who fetches it (the socket table says which replica's process holds each
// connection), so that "one replica at a time" is what the inventories saw, not what the replicas say.
var _ = Describe("TargetSources shared among sharded replicas", Ordered, func() {
	const (
		ns       = "tsrc-sharded"
		sources  = 12
		devices  = 40 // per TargetSource
		interval = 10 * time.Second
		misses   = 3
		removed  = 4 // per TargetSource, before the kill
		added    = 4 // per TargetSource, after it
		// bulk devices are added to one of the killed replica's TargetSources before the kill, which lands in the
		// middle of the sync creating their Targets.
		bulk = 200
		// An interval counts from the end of the last attempt, which status keeps to the second: two fetches
		// start at least interval - 1s apart when one replica at a time syncs.
		minGap = interval - time.Second
	)
	var inventories []*fakenetbox.Server
	sourceName := func(i int) string { return fmt.Sprintf("ts-%02d", i) }
	// deviceID is the id of the n-th device (from 1) of the i-th inventory: the inventories share a namespace,
	// so their devices' names differ.
	deviceID := func(i, n int) int { return (i+1)*1000 + n }
	deviceName := func(id int) string { return fmt.Sprintf("dev-%05d", id) }

	targets := func(g Gomega) map[string]bool {
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		out := map[string]bool{}
		for _, t := range list.Items {
			out[t.Name] = true
		}
		return out
	}
	// fetchers are the processes that fetched each inventory, in the order of their first fetch.
	fetchers := func(fetches []fakenetbox.Request) []string {
		var out []string
		for _, f := range fetches {
			if !slices.Contains(out, f.Client) {
				out = append(out, f.Client)
			}
		}
		return out
	}

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		for i := range sources {
			s := fakenetbox.Start(0, "")
			DeferCleanup(s.Close)
			for n := 1; n <= devices; n++ {
				s.Put(fakenetbox.NewDevice(deviceID(i, n)))
			}
			s.IdentifyClients(cp.OperatorReplicaOfRequest)
			inventories = append(inventories, s)
			Expect(k8sClient.Create(ctx, harness.NetBoxTargetSource(ns, sourceName(i), s.DevicesURL(25), interval, misses))).To(Succeed())
		}
		// The suite's other scenarios share the operator (and measure its load): nothing is left syncing once
		// the inventories close (cleanups run last first).
		DeferCleanup(func() { Expect(harness.DeleteTargetSources(ctx, k8sClient, ns)).To(Succeed()) })
	})

	It("syncs each TargetSource on exactly one replica, once an interval, and spreads them over the replicas", func() {
		want := map[string]bool{}
		for i := range sources {
			for n := 1; n <= devices; n++ {
				want[deviceName(deviceID(i, n))] = true
			}
		}
		Eventually(targets).WithTimeout(time.Minute).Should(Equal(want))
		steadyFrom := time.Now()
		Eventually(func(g Gomega) {
			for i, s := range inventories {
				g.Expect(len(s.FetchesSince(steadyFrom))).To(BeNumerically(">=", 3), "fetches of %s", sourceName(i))
			}
		}).WithTimeout(5 * interval).WithPolling(time.Second).Should(Succeed())

		running := map[string]bool{}
		for _, r := range cp.OperatorReplicas() {
			running[harness.ReplicaProcess(r)] = true
		}
		perReplica := map[string][]string{}
		for i, s := range inventories {
			fetches := s.Fetches()
			who := fetchers(fetches)
			Expect(who).To(HaveLen(1), "%s fetched by %v", sourceName(i), who)
			Expect(running).To(HaveKey(who[0]), "%s fetched by a process that is not a running replica", sourceName(i))
			Expect(fakenetbox.ShortestFetchGap(fetches, "", time.Time{})).To(BeNumerically(">=", minGap), "%s fetched twice within an interval: %v",
				sourceName(i), fakenetbox.FetchLog(fetches))
			perReplica[who[0]] = append(perReplica[who[0]], sourceName(i))
		}
		Expect(len(perReplica)).To(BeNumerically(">=", 2), "the TargetSources are shared: %v", perReplica)
		AddReportEntry("TargetSources per replica", fmt.Sprintf("%v", perReplica))
	})

	It("hands a SIGKILLed replica's TargetSources over while devices go and come: no Target deleted early or recreated, misses counted on", func() {
		history, err := cp.RecordTargets(ctx, ns)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(history.Stop)
		Eventually(func() int { return len(history.Live()) }).WithTimeout(10 * time.Second).Should(Equal(sources * devices))
		before := history.Live()

		// The victim is the process that synced the most TargetSources last.
		last := map[string][]int{}
		for i, s := range inventories {
			fetches := s.Fetches()
			who := fetches[len(fetches)-1].Client
			last[who] = append(last[who], i)
		}
		var victim string
		for who, owned := range last {
			if len(owned) > len(last[victim]) {
				victim = who
			}
		}
		victimPod := victim[:strings.LastIndex(victim, "/")]

		By("removing devices from every inventory and waiting for their Targets to be marked missing")
		gone := map[string]bool{}
		for i, s := range inventories {
			for n := 1; n <= removed; n++ {
				id := deviceID(i, n*devices/removed)
				s.Remove(id)
				gone[deviceName(id)] = true
			}
		}
		marks := map[string]string{}
		Eventually(func(g Gomega) {
			seen := map[string]string{}
			for _, e := range history.Targets() {
				seen[e.Name] = e.MissingSince
			}
			for name := range gone {
				g.Expect(seen[name]).NotTo(BeEmpty(), "%s not marked missing yet", name)
				marks[name] = seen[name]
			}
		}).WithTimeout(2*interval + 5*time.Second).Should(Succeed())

		By(fmt.Sprintf("adding devices to %s, and killing %s, which synced %d TargetSources, once its sync has created the first of their Targets",
			sourceName(last[victim][0]), victim, len(last[victim])))
		midSync := inventories[last[victim][0]]
		var bulkNames []string
		for n := devices + added + 1; n <= devices+added+bulk; n++ {
			id := deviceID(last[victim][0], n)
			midSync.Put(fakenetbox.NewDevice(id))
			bulkNames = append(bulkNames, deviceName(id))
		}
		bulkCreated := func() int {
			live, n := history.Live(), 0
			for _, name := range bulkNames {
				if _, ok := live[name]; ok {
					n++
				}
			}
			return n
		}
		Eventually(bulkCreated).WithTimeout(2 * interval).WithPolling(5 * time.Millisecond).Should(BeNumerically(">", 0))
		_, err = cp.KillOperatorReplica(ctx, victimPod)
		Expect(err).NotTo(HaveOccurred())
		killed := time.Now()
		createdAtKill := bulkCreated()
		want := map[string]bool{}
		for _, name := range bulkNames {
			want[name] = true
		}
		for i, s := range inventories {
			for n := 1; n <= devices+added; n++ {
				if n > devices {
					s.Put(fakenetbox.NewDevice(deviceID(i, n)))
				}
				if name := deviceName(deviceID(i, n)); !gone[name] {
					want[name] = true
				}
			}
		}
		Eventually(func(g Gomega) {
			g.Expect(targets(g)).To(Equal(want))
			var list operatorv1alpha1.TargetSourceList
			g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			for _, ts := range list.Items {
				g.Expect(ts.Status.TargetsMissing).To(BeZero(), "%s", ts.Name)
			}
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		converged := time.Since(killed)
		Eventually(func() map[string]bool {
			live := map[string]bool{}
			for name := range history.Live() {
				live[name] = true
			}
			return live
		}).WithTimeout(10 * time.Second).Should(Equal(want))
		history.Stop()
		Expect(history.Err()).NotTo(HaveOccurred())

		By("judging the handover from the watched Targets and TargetSources, and the inventories' fetches")
		Expect(history.Recreated()).To(BeEmpty(), "Targets deleted and created again")
		for name, uid := range before {
			if live, ok := history.Live()[name]; ok {
				Expect(live).To(Equal(uid), "Target %s replaced", name)
			}
		}
		deletions := history.Deletions()
		Expect(slices.Sorted(maps.Keys(deletions))).To(Equal(slices.Sorted(maps.Keys(gone))), "exactly the removed devices' Targets are deleted")
		for name, d := range deletions {
			Expect(d.MissingSince).To(Equal(marks[name]), "%s lost its mark before deletion", name)
		}
		var slowest time.Duration
		takenBy := map[string][]string{}
		for i, s := range inventories {
			name := sourceName(i)
			syncs := history.SyncsOf(name)
			for k := 1; k < len(syncs); k++ {
				Expect(syncs[k]).To(Equal(syncs[k-1]+1), "%s: status.syncs went %v", name, syncs)
			}
			// Every removed device of this source was marked by one sync, and deleted by the misses-th.
			mark, err := strconv.ParseInt(marks[deviceName(deviceID(i, devices))], 10, 64)
			Expect(err).NotTo(HaveOccurred())
			var deletingSync int64
			for _, e := range history.Sources() {
				if e.Name == name && e.Deleted > 0 {
					Expect(e.Deleted).To(BeEquivalentTo(removed), "%s: the removed Targets go in one sync", name)
					deletingSync = e.Syncs
				}
			}
			Expect(deletingSync).To(Equal(mark+misses-1), "%s: deleted at sync %d, marked at %d", name, deletingSync, mark)

			fetches := s.Fetches()
			Expect(fakenetbox.ShortestFetchGap(fetches, victim, killed)).To(BeNumerically(">=", minGap), "%s fetched twice within an interval: %v",
				name, fakenetbox.FetchLog(fetches))
			for _, f := range s.FetchesSince(killed) {
				Expect(f.Client).NotTo(Equal(victim), "%s fetched by the killed process after the kill", name)
			}
			if slices.Contains(last[victim], i) {
				after := s.FetchesSince(killed)
				Expect(after).NotTo(BeEmpty(), "%s never fetched after the kill", name)
				slowest = max(slowest, after[0].At.Sub(killed))
				takenBy[name] = fetchers(after)
			}
		}
		Expect(createdAtKill).To(BeNumerically("<", bulk), "the kill must land in the middle of the sync creating the bulk")
		AddReportEntry("sharded TargetSource handover", fmt.Sprintf(
			"killed with %d of %d new Targets created; %d TargetSources of %s handed over (fetched after the kill by %v); kill to the last one's first fetch by another process %s; kill to inventories matched %s",
			createdAtKill, bulk, len(last[victim]), victim, takenBy, slowest.Round(100*time.Millisecond), converged.Round(100*time.Millisecond)))
		record("targetsource_sigkill_handover_s", slowest.Seconds())
		record("targetsource_sigkill_converged_s", converged.Seconds())
	})
})
