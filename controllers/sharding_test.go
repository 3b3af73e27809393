package controllers_test

import (
	"fmt"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/sharding"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

var _ = Describe("A sharded operator", Ordered, func() {
	var (
		install  *operatorInstall
		requests *apiRequests
		fleets   []*fleet
		a, b, c  *shardMember
	)

	BeforeAll(func() {
		install = renderOperatorInstall()
		install.apply()
		waitForWritePolicies(install)
		requests = newAPIRequests()
		DeferCleanup(listingInformers())
		for i := 0; i < 6; i++ {
			f := newFleet(1, nil, "")
			f.addTargets(0, 3)
			fleets = append(fleets, f)
		}
		a = startShardMember("operator-a", install, requests)
		b = startShardMember("operator-b", install, requests)
		DeferCleanup(func() {
			for _, m := range []*shardMember{a, b, c} {
				if m != nil {
					m.stop()
				}
			}
		})
	})

	AfterEach(func() {
		Expect(requests.refusals()).To(BeEmpty(), "the API server refused a member")
	})

	It("reconciles every Cluster by exactly one member, and both members carry some", func() {
		count := map[string]int{}
		Eventually(func(g Gomega) {
			held := owners(fleets)
			g.Expect(held).To(HaveLen(len(fleets)))
			count = map[string]int{}
			for _, owner := range held {
				g.Expect(owner).To(BeElementOf(a.identity, b.identity))
				count[owner]++
			}
			g.Expect(count).To(HaveLen(2), "both members own Clusters")
		}, 4*shardLease, 100*time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("Clusters per member: %v\n", count)
		for _, f := range fleets {
			f.converged(3, 0)
		}
		// Both members start at once: the first may take every Cluster before it sees the second, then hand
		// the second its share. What must never happen is two members pushing to one Cluster in turn.
		pushes := pushesTo(fleets...)
		noOverlap(pushes, time.Time{})
		for _, p := range pushes {
			Expect(p.Member).To(BeElementOf(a.identity, b.identity))
		}

		By("every member reading whole the StatefulSets of its own Clusters only, though every Cluster is named alike")
		// What the caches hold of other Clusters' objects (by name only) is the sharding package's own spec
		// ("The caches of a replica's share").
		for _, m := range []*shardMember{a, b} {
			for _, f := range fleets {
				Eventually(func(g Gomega) {
					owner := owners([]*fleet{f})[f.ns]
					key := client.ObjectKey{Namespace: f.ns, Name: f.name}
					var sts appsv1.StatefulSet
					err := m.reconcilerReads.Get(suiteCtx, key, &sts)
					if owner == m.identity {
						g.Expect(err).NotTo(HaveOccurred())
						g.Expect(sts.Spec.Replicas).NotTo(BeNil(), "member %s reads its own Cluster %s only by name", m.identity, f.ns)
						return
					}
					g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "member %s reads another's Cluster %s: %v", m.identity, f.ns, err)
				}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
			}
		}

		By("every member answering the metrics API for every Cluster, its own or not")
		for _, m := range []*shardMember{a, b} {
			for _, f := range fleets {
				Eventually(func() map[string]int64 { return m.targetsPresent(f) }).
					Should(Equal(map[string]int64{f.podName(0): 3}), "member %s, Cluster %s", m.identity, f.ns)
			}
		}

		var leases coordinationv1.LeaseList
		Expect(k8sClient.List(suiteCtx, &leases, client.InNamespace(install.namespace),
			client.MatchingLabels{sharding.MemberLabel: "true"})).To(Succeed())
		Expect(leases.Items).To(HaveLen(2))
	})

	It("hands a leaving member's Clusters to the others at once, with nothing pushed twice", func() {
		left := time.Now()
		a.leave()
		gone := time.Now()
		Eventually(func(g Gomega) {
			held := owners(fleets)
			g.Expect(held).To(HaveLen(len(fleets)))
			for _, owner := range held {
				g.Expect(owner).To(Equal(b.identity))
			}
		}, 2*shardLease, 100*time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("every Cluster on the remaining member %s after the other left\n", time.Since(left).Round(10*time.Millisecond))
		for _, f := range fleets {
			f.converged(3, 0)
		}
		pushes := pushesTo(fleets...)
		noOverlap(pushes, time.Time{})
		for _, p := range pushes {
			if p.Member == a.identity {
				Expect(p.At).To(BeTemporally("<", gone), "the member pushed after it had left")
			}
		}
	})

	It("gives a joining member its share, draining before it takes over, and makes it ready only then", func() {
		c = startShardMember("operator-c", install, requests)
		Expect(c.member.HoldsShare(nil)).NotTo(Succeed(), "ready before it joined")
		Eventually(func() error { return c.member.HoldsShare(nil) }, 4*shardLease, 20*time.Millisecond).Should(Succeed())
		// Ready: it owns its share and has cached it (a rolling update replaces the next replica only now).
		ownedByC := 0
		held := owners(fleets)
		for _, f := range fleets {
			if held[f.ns] == c.identity {
				ownedByC++
				Expect(c.member.Covers(types.NamespacedName{Namespace: f.ns, Name: f.name})).To(BeTrue(),
					"ready without a cache of %s, which it owns", f.ns)
			}
		}
		Expect(ownedByC).To(BeNumerically(">", 0), "ready before it took any Cluster over")
		Eventually(func(g Gomega) {
			count := map[string]int{}
			for _, owner := range owners(fleets) {
				count[owner]++
			}
			g.Expect(count[c.identity]).To(BeNumerically(">", 0))
			g.Expect(count[b.identity]).To(BeNumerically(">", 0))
		}, 4*shardLease, 100*time.Millisecond).Should(Succeed())
		for _, f := range fleets {
			f.converged(3, 0)
		}
		noOverlap(pushesTo(fleets...), time.Time{})
	})

	It("takes the Clusters of a member cut off from kube-apiserver after its lease runs out, and the cut-off member pushes nothing after", func() {
		var ofC []*fleet
		for _, f := range fleets {
			if owners([]*fleet{f})[f.ns] == c.identity {
				ofC = append(ofC, f)
			}
		}
		Expect(ofC).NotTo(BeEmpty())
		cut := time.Now()
		c.api.cut.Store(true)
		// Keep the collectors busy so that a member that still believed it owned them would push.
		for _, f := range ofC {
			f.addTargets(3, 1)
		}
		Eventually(func(g Gomega) {
			for _, f := range ofC {
				g.Expect(owners([]*fleet{f})[f.ns]).To(Equal(b.identity))
			}
		}, shardLease+5*time.Second, 100*time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("the cut-off member's %d Clusters taken over %s after the cut (lease %s)\n",
			len(ofC), time.Since(cut).Round(10*time.Millisecond), shardLease)
		for _, f := range ofC {
			f.converged(4, 0)
		}
		// Before the cut these Clusters already changed hands once (to the joining member, checked above);
		// from the cut on, the cut-off member's pushes must all come before the other's.
		pushes := pushesTo(ofC...)
		noOverlap(pushes, cut)
		for _, p := range pushes {
			if p.Member == c.identity && p.At.After(cut) {
				Expect(p.At).To(BeTemporally("<=", cut.Add(shardLease)),
					"the cut-off member pushed after its own lease had run out")
			}
		}

		By("reconnecting it: it finds its lease marked dead and exits")
		c.api.cut.Store(false)
		var err error
		Eventually(c.exited, 2*shardLease).Should(Receive(&err))
		Expect(err).To(MatchError(ContainSubstring("marked dead")))
		c = nil
	})

	It("takes over a Cluster whose recorded owner has no Lease once it has been unseen for a lease duration", func() {
		// An earlier install's replica, or one whose Lease was deleted by hand: no member would ever see its
		// Lease expire, and the Cluster was never reconciled again.
		f := fleets[0]
		cluster := f.cluster()
		Expect(cluster.Status.Shard).NotTo(BeNil())
		generation := cluster.Status.Shard.Generation + 1
		cluster.Status.Shard = &operatorv1alpha1.ClusterShard{Owner: "operator-of-an-earlier-install", Generation: generation,
			Since: &metav1.Time{Time: time.Now()}}
		Expect(k8sClient.Status().Update(suiteCtx, cluster)).To(Succeed())
		written := time.Now()
		Eventually(func(g Gomega) {
			shard := f.cluster().Status.Shard
			g.Expect(shard.Owner).To(Equal(b.identity))
			g.Expect(shard.Generation).To(BeNumerically(">", generation))
		}, shardLease+5*time.Second, 50*time.Millisecond).Should(Succeed())
		took := time.Since(written)
		GinkgoWriter.Printf("a Cluster whose owner has no Lease taken over %s after it was written (lease %s)\n",
			took.Round(10*time.Millisecond), shardLease)
		Expect(took).To(BeNumerically(">=", shardLease), "taken over before its owner had been unseen for a lease duration")
		f.addTargets(10, 1)
		f.converged(int(cluster.Status.TargetsCount)+1, 0)
	})

	It("joins the members only once the caches it reconciles from have synced", func() {
		// A replica restarted into a large fleet takes seconds to list it; as a member before that, it would be
		// given Clusters it cannot act on, and they would wait for it instead of going to the others.
		const listing = 3 * time.Second
		started := time.Now()
		d := startShardMember("operator-d", install, requests, func(m *shardMember) { m.reads.holdBackLists("clusters", listing) })
		var joined time.Duration
		Eventually(func() error {
			joined = time.Since(started)
			var lease coordinationv1.Lease
			return k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: install.namespace, Name: d.identity}, &lease)
		}, listing+10*time.Second, 20*time.Millisecond).Should(Succeed())
		Expect(joined).To(BeNumerically(">=", listing), "joined %s after it started, before its Clusters were listed", joined)
		ownsSome(d, fleets)
		everyFleetConverged(fleets)
		d.leave()
		noOverlap(pushesTo(fleets...), time.Time{})
	})

	It("takes over at once the Clusters of a process that its pod's next process replaced", func() {
		// A container restarted after a crash or an OOM kill: its earlier process is gone and left its Lease
		// valid. The Lease lasts a minute here, so that only the next process's word can move its Clusters.
		inPod := func(m *shardMember) { m.pod, m.lease = "operator-pod-e", time.Minute }
		e := startShardMember("operator-e", install, requests, inPod)
		ownsSome(e, fleets)
		var ofE []*fleet
		for _, f := range fleets {
			if owners([]*fleet{f})[f.ns] == e.identity {
				ofE = append(ofE, f)
			}
		}
		By("killing it: cut off, then stopped, it cannot release its Lease")
		e.api.cut.Store(true)
		e.stop()
		Eventually(e.exited, 45*time.Second).Should(Receive())
		killed := time.Now()
		next := startShardMember("operator-e", install, requests, inPod)
		DeferCleanup(func() { next.leave() })
		Eventually(func(g Gomega) {
			for _, f := range ofE {
				g.Expect(owners([]*fleet{f})[f.ns]).NotTo(Equal(e.identity))
			}
		}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
		took := time.Since(killed)
		GinkgoWriter.Printf("the %d Clusters of a pod's earlier process taken over %s after the next one started (its lease 1m)\n",
			len(ofE), took.Round(10*time.Millisecond))
		var earlier, other coordinationv1.Lease
		// Marked dead, or already deleted: a dead Lease that no Cluster names any more is deleted as abandoned,
		// which can come within moments of the takeovers, and only dead Leases are.
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: install.namespace, Name: e.identity}, &earlier); !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
			Expect(earlier.Annotations).To(HaveKeyWithValue("operator.gnmic.dev/dead", "true"))
		}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: install.namespace, Name: b.identity}, &other)).To(Succeed())
		Expect(other.Annotations).NotTo(HaveKey("operator.gnmic.dev/dead"), "a member of another pod marked dead")
		everyFleetConverged(ofE)
		noOverlap(pushesTo(ofE...), time.Time{})
	})

	It("sent every Lease verb shard-member-role grants", func() {
		for _, verb := range []string{"get", "list", "watch", "create", "update", "delete"} {
			Expect(requests.sends(permission{verb: verb, group: "coordination.k8s.io", resource: "leases"})).To(BeTrue(), verb)
		}
	})
})

// addClusterBeside makes a second Cluster, name, in the fleet's namespace, with one Ready collector pod created
// before the Cluster and targets s0000… selected by their own Pipeline. The pod is there first so that a
// replica that reconciled the Cluster without seeing it would report every target unassigned.
func addClusterBeside(f *fleet, name string, targets int) *fleet {
	g := &fleet{ns: f.ns, name: name, subnet: int(fleetSeq.Add(1)), collectors: map[int]*fakecollector.Collector{},
		image: gnmic.DefaultImage}
	g.port = freePort(g.ip(0))
	DeferCleanup(g.close)
	Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: operatorv1alpha1.PipelineSpec{ClusterRef: name,
			TargetSelectors:  []metav1.LabelSelector{{MatchLabels: map[string]string{"fleet": name}}},
			SubscriptionRefs: []string{"counters"},
			Outputs:          &operatorv1alpha1.OutputSelection{OutputRefs: []string{"file"}}}})).To(Succeed())
	for i := 0; i < targets; i++ {
		Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%04d", i),
			Namespace: f.ns, Labels: map[string]string{"fleet": name}},
			Spec: operatorv1alpha1.TargetSpec{Address: fmt.Sprintf("10.200.0.%d:57400", i), Profile: "routers"}})).To(Succeed())
	}
	g.addPod(0)
	c := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	c.Spec.Image = g.image
	c.Spec.Replicas = ptr.To(int32(1))
	c.Spec.API.RestPort = int32(g.port)
	Expect(k8sClient.Create(suiteCtx, c)).To(Succeed())
	return g
}

var _ = Describe("A sharded replica's cache", Ordered, func() {
	var (
		install *operatorInstall
		m       *shardMember
		f       *fleet
	)

	BeforeAll(func() {
		install = renderOperatorInstall()
		install.apply()
		waitForWritePolicies(install)
		DeferCleanup(listingInformers())
		f = newFleet(1, nil, "")
		f.addTargets(0, 3)
		m = startShardMember("operator-share", install, newAPIRequests())
		DeferCleanup(func() {
			// Leave no member behind for the other sharding specs, which count the members' Leases.
			m.leave()
			Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: install.namespace, Name: m.identity}}))).To(Succeed())
		})
		f.converged(3, 0)
	})

	It("holds only the objects of the Clusters the replica owns and the Targets of their namespaces", func() {
		Expect(owners([]*fleet{f})[f.ns]).To(Equal(m.identity))
		clusterObjects := map[string]bool{"pods": true, "statefulsets": true, "services": true, "configmaps": true,
			"poddisruptionbudgets": true, "networkpolicies": true}
		var reads []selectedRead
		for _, read := range m.reads.all() {
			switch {
			case read == (selectedRead{resource: "pods", selector: operatorv1alpha1.ClusterLabel}):
				continue // the metrics API's pods: their identity only, checked below
			case clusterObjects[read.resource]:
				Expect(read.selector).To(HavePrefix(operatorv1alpha1.ClusterLabel+" in ("), "%s read beyond the share", read.resource)
			case read.resource == "targets":
				Expect(read.namespace).NotTo(BeEmpty(), "Targets read in every namespace")
			default:
				continue
			}
			reads = append(reads, read)
		}
		// Other specs' Clusters may be in the share too: the selector names fleet among them.
		Expect(reads).To(ContainElement(WithTransform(func(r selectedRead) bool {
			return r.resource == "pods" && r.namespace == "" &&
				regexp.MustCompile(`^`+regexp.QuoteMeta(operatorv1alpha1.ClusterLabel)+` in \((.*,)?fleet(,.*)?\)$`).MatchString(r.selector)
		}, BeTrue())), "the share's Pods selected by the names of its Clusters")
		Expect(reads).To(ContainElement(selectedRead{resource: "targets", namespace: f.ns}))

		By("keeping of every collector pod, for the metrics API, only what names it")
		var pod corev1.Pod
		Expect(m.cache.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.podName(0)}, &pod)).To(Succeed())
		Expect(pod.Labels).To(HaveKeyWithValue(operatorv1alpha1.ClusterLabel, f.name))
		Expect(pod.UID).NotTo(BeEmpty())
		Expect(pod.Spec.Containers).To(BeEmpty())
		Expect(pod.Status.Conditions).To(BeEmpty())
	})

	It("reconciles a Cluster it takes over only once its cache holds that Cluster's objects", func() {
		// The namespace's cache holds the first Cluster's objects; the one that adds the second is held back,
		// so that for seconds the replica owns a Cluster its serving cache knows no pod of.
		m.reads.holdBack("second", 3*time.Second)
		second := addClusterBeside(f, "second", 2)
		var reports []string
		Eventually(func(g Gomega) {
			c := second.cluster()
			if c.Status.Shard != nil && c.Status.TargetsCount > 0 {
				reports = append(reports, fmt.Sprintf("%d of %d targets unassigned", c.Status.UnassignedTargets, c.Status.TargetsCount))
			}
			g.Expect(c.Status.Shard).NotTo(BeNil())
			g.Expect(c.Status.Shard.Owner).To(Equal(m.identity))
			g.Expect(c.Status.TargetsCount).To(BeEquivalentTo(2))
			g.Expect(c.Status.Collectors).To(HaveLen(1))
			g.Expect(second.collectors[0].Targets()).To(ConsistOf("s0000", "s0001"))
		}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
		Expect(reports).To(HaveEach(HavePrefix("0 of")), "the replica reconciled the Cluster without seeing its pod")
		f.converged(3, 0)
	})
})
