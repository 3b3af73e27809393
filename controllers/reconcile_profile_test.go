package controllers_test

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
)

// The profile of a steady Cluster's reconcile at scale: `make profile-reconcile PROFILE_TARGETS=5000` (docs/fleet.md).
// Skipped unless PROFILE_TARGETS is set. It writes the CPU profile of PROFILE_RECONCILES reconciles (default 20)
// to PROFILE_OUT (default reconcile-<targets>.pprof) and prints the mean reconcile time.
var _ = Describe("Profile of a steady Cluster's reconcile", func() {
	It("reconciles a converged Cluster of PROFILE_TARGETS targets and profiles it", func() {
		targets, _ := strconv.Atoi(os.Getenv("PROFILE_TARGETS"))
		if targets <= 0 {
			Skip("PROFILE_TARGETS is not set")
		}
		pods := max(1, targets/500)
		if n, err := strconv.Atoi(os.Getenv("PROFILE_PODS")); err == nil && n > 0 {
			pods = n
		}
		reconciles := 20
		if n, err := strconv.Atoi(os.Getenv("PROFILE_RECONCILES")); err == nil && n > 0 {
			reconciles = n
		}
		out := os.Getenv("PROFILE_OUT")
		if out == "" {
			out = fmt.Sprintf("reconcile-%d.pprof", targets)
		}

		f := newFleetOf(pods)
		createTargetsConcurrently(f, targets)
		fast := rest.CopyConfig(cfg)
		fast.QPS, fast.Burst = 2000, 4000
		mgr := newManager(fast)
		r := &cluster.Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: scheme,
			Recorder: mgr.GetEventRecorderFor("gnmic-operator"),
			Dialer:   &collector.PodIPDialer{HTTP: collector.DefaultHTTPClient()},
		}
		op := runOperator(mgr, r)
		DeferCleanup(op.Stop)
		began := time.Now()
		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.TargetsCount).To(BeEquivalentTo(targets))
			var list operatorv1alpha1.TargetList
			g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(f.ns))).To(Succeed())
			assigned := 0
			for _, t := range list.Items {
				if st := t.Status.ClusterStates[f.name]; st.State == operatorv1alpha1.TargetAssigned && st.Collecting {
					assigned++
				}
			}
			g.Expect(assigned).To(Equal(targets))
		}).WithTimeout(15 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("%d targets on %d pods converged %.0f s after the operator started\n", targets, pods,
			time.Since(began).Seconds())
		time.Sleep(3 * time.Second) // the last status writes' reconciles

		// The reconciler is called directly, as its controller calls it (the controller itself has nothing to
		// do meanwhile): every call is a whole reconcile of the steady Cluster.
		file, err := os.Create(out)
		Expect(err).NotTo(HaveOccurred())
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: f.ns, Name: f.name}}
		var spent time.Duration
		Expect(pprof.StartCPUProfile(file)).To(Succeed())
		for range reconciles {
			start := time.Now()
			_, err := r.Reconcile(suiteCtx, req)
			spent += time.Since(start)
			Expect(err).NotTo(HaveOccurred())
		}
		pprof.StopCPUProfile()
		Expect(file.Close()).To(Succeed())
		GinkgoWriter.Printf("%d reconciles of a steady %d-target Cluster on %d pods: mean %.1f ms; CPU profile in %s\n",
			reconciles, targets, pods, float64(spent.Microseconds())/float64(reconciles)/1000, out)
	})
})

// createTargetsConcurrently creates the fleet's Targets 0..n-1 with 16 writers on an unthrottled client.
func createTargetsConcurrently(f *fleet, n int) {
	fast := rest.CopyConfig(cfg)
	fast.QPS = -1
	c, err := client.New(fast, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	next := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for i := range next {
				t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: targetName(i), Namespace: f.ns,
					Labels: map[string]string{"fleet": f.name}},
					Spec: operatorv1alpha1.TargetSpec{Address: fmt.Sprintf("10.%d.%d.%d:57400", i/65536, i/256%256, i%256), Profile: "routers"}}
				Expect(c.Create(suiteCtx, t)).To(Succeed())
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
