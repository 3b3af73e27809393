package cluster

import (
	"fmt"
	"maps"
	"math/rand"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// A reconcile's list of its namespace's Targets, kept between reconciles and brought up to date with the Targets
// the watch named since (listTargets), against a cache of a real API server: after every round of creates,
// label and status changes and deletes, it holds what the cache holds, each Target at its latest version.
var _ = Describe("The Targets a reconcile lists", func() {
	It("are what the cache holds after every round of changes, taken one by one while few changed", func() {
		ns := fmt.Sprintf("list-targets-%d", namespaceSeq.Add(1))
		Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		informers, err := cache.New(restConfig, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
		Expect(err).NotTo(HaveOccurred())
		changes := &targetChanges{}
		informer, err := informers.GetInformer(suiteCtx, &operatorv1alpha1.Target{})
		Expect(err).NotTo(HaveOccurred())
		note := func(obj any) {
			if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			o := obj.(client.Object)
			changes.note(o.GetNamespace(), o.GetName())
		}
		_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: note,
			UpdateFunc: func(_, obj any) { note(obj) }, DeleteFunc: note})
		Expect(err).NotTo(HaveOccurred())
		go func() { _ = informers.Start(suiteCtx) }()
		Expect(informers.WaitForCacheSync(suiteCtx)).To(BeTrue())
		cached, err := client.New(restConfig, client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: informers}})
		Expect(err).NotTo(HaveOccurred())
		r := &Reconciler{Client: cached}
		r.targetChanges = changes
		memory := &clusterMemory{}

		rng := rand.New(rand.NewSource(7))
		live := map[string]bool{}
		next, expected := 0, uint64(0)
		create := func() {
			name := fmt.Sprintf("r%03d", next)
			next++
			Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels: map[string]string{"round": "0"}}, Spec: operatorv1alpha1.TargetSpec{Address: "10.0.0.1:57400", Profile: "p"}})).To(Succeed())
			live[name] = true
			expected++
		}
		pick := func() string {
			names := make([]string, 0, len(live))
			for n := range maps.Keys(live) {
				names = append(names, n)
			}
			return names[rng.Intn(len(names))]
		}
		// cachedVersions are the Targets of the namespace in the cache, by name, with their resourceVersions.
		cachedVersions := func() map[string]string {
			var list operatorv1alpha1.TargetList
			Expect(informers.List(suiteCtx, &list, client.InNamespace(ns))).To(Succeed())
			out := map[string]string{}
			for _, t := range list.Items {
				out[t.Name] = t.ResourceVersion
			}
			return out
		}
		versionsOf := func(items []operatorv1alpha1.Target) map[string]string {
			out := map[string]string{}
			for _, t := range items {
				Expect(out).NotTo(HaveKey(t.Name), "a Target listed twice")
				out[t.Name] = t.ResourceVersion
			}
			return out
		}

		for range 30 {
			create()
		}
		Eventually(func() uint64 { return changes.of(ns) }).Should(Equal(expected))
		items, unchanged, err := r.listTargets(suiteCtx, ns, memory)
		Expect(err).NotTo(HaveOccurred())
		Expect(unchanged).To(BeFalse())
		Expect(versionsOf(items)).To(Equal(cachedVersions()))
		listedAt := memory.targets.at

		refreshed := 0
		for round := 1; round <= 40; round++ {
			ops := rng.Intn(6) // some rounds change nothing
			for range ops {
				switch k := rng.Intn(4); {
				case k == 0 || len(live) < 5:
					create()
				case k == 1:
					name := pick()
					var t operatorv1alpha1.Target
					Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, &t)).To(Succeed())
					t.Labels["round"] = fmt.Sprint(expected) // a value of its own: every write is a change
					Expect(k8sClient.Update(suiteCtx, &t)).To(Succeed())
					expected++
				case k == 2:
					name := pick()
					var t operatorv1alpha1.Target
					Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, &t)).To(Succeed())
					t.Status.State = fmt.Sprintf("change-%d", expected)
					Expect(k8sClient.Status().Update(suiteCtx, &t)).To(Succeed())
					expected++
				default:
					name := pick()
					Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
					delete(live, name)
					expected++
				}
			}
			Eventually(func() uint64 { return changes.of(ns) }).Should(Equal(expected))
			items, unchanged, err := r.listTargets(suiteCtx, ns, memory)
			Expect(err).NotTo(HaveOccurred())
			Expect(unchanged).To(Equal(ops == 0), "round %d: %d changes", round, ops)
			Expect(versionsOf(items)).To(Equal(cachedVersions()), "round %d", round)
			Expect(len(items)).To(Equal(len(live)))
			if ops > 0 {
				refreshed++
			}
		}
		Expect(memory.targets.at).To(Equal(listedAt), "the namespace was listed again: no round took its Targets one by one")
		Expect(refreshed).To(BeNumerically(">=", 25))

		By("more changes than are taken one by one: the namespace is listed again")
		for range targetRefreshes + 1 {
			create()
		}
		Eventually(func() uint64 { return changes.of(ns) }).Should(Equal(expected))
		items, _, err = r.listTargets(suiteCtx, ns, memory)
		Expect(err).NotTo(HaveOccurred())
		Expect(versionsOf(items)).To(Equal(cachedVersions()))
		Expect(memory.targets.at).NotTo(Equal(listedAt))
	})
})
