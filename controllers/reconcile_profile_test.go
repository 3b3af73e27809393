package controllers_test

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
)

// The profile of a steady Cluster's reconcile at scale: `make profile-reconcile PROFILE_TARGETS=5000` (docs/fleet.md).
// Skipped unless PROFILE_TARGETS is set. It writes the CPU profile of PROFILE_RECONCILES reconciles (default 20)
// to PROFILE_OUT (default reconcile-<targets>.pprof) and prints the mean reconcile time; then it changes one Target
// at a time and writes the profile of those reconciles to PROFILE_OUT.change.
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
			g.Expect(f.collectingTargets(g)).To(Equal(targets))
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
		cpuBefore := processCPU()
		Expect(pprof.StartCPUProfile(file)).To(Succeed())
		for range reconciles {
			start := time.Now()
			_, err := r.Reconcile(suiteCtx, req)
			spent += time.Since(start)
			Expect(err).NotTo(HaveOccurred())
		}
		pprof.StopCPUProfile()
		cpuSpent := processCPU() - cpuBefore
		Expect(file.Close()).To(Succeed())
		GinkgoWriter.Printf("%d reconciles of a steady %d-target Cluster on %d pods: mean %.1f ms, %.3f CPU-s each; CPU profile in %s\n",
			reconciles, targets, pods, float64(spent.Microseconds())/float64(reconciles)/1000, cpuSpent/float64(reconciles), out)

		By("changing one Target at a time: the controller reconciles what the change wakes")
		changeFile, err := os.Create(out + ".change")
		Expect(err).NotTo(HaveOccurred())
		Expect(pprof.StartCPUProfile(changeFile)).To(Succeed())
		for k := range 5 {
			before := clusterReconciles()
			cpu := processCPU()
			name := targetName(k * (targets / 5))
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				var t operatorv1alpha1.Target
				if err := k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: f.ns, Name: name}, &t); err != nil {
					return err
				}
				t.Spec.Tags = map[string]string{"revision": strconv.Itoa(k)}
				return k8sClient.Update(suiteCtx, &t)
			})).To(Succeed())
			Eventually(func() float64 { return clusterReconciles().count }).WithTimeout(time.Minute).Should(BeNumerically(">", before.count))
			after := quietReconciles()
			n := after.count - before.count
			GinkgoWriter.Printf("one Target changed (%s): %.0f reconcile(s), mean %.1f ms, %.3f CPU-s in all (1 s quiet included)\n",
				name, n, (after.seconds-before.seconds)/n*1000, processCPU()-cpu)
		}
		pprof.StopCPUProfile()
		Expect(changeFile.Close()).To(Succeed())
		GinkgoWriter.Printf("CPU profile of the changes (the process: operator, fake collectors, test) in %s.change\n", out)

		By("restarting the operator over the converged Cluster")
		op.Stop()
		applies, starts := f.appliesAndStarts(targets)
		restarted := newManager(fast)
		counted, writes := countingClient(restarted)
		r2 := &cluster.Reconciler{
			Client: counted, APIReader: restarted.GetAPIReader(), Scheme: scheme,
			Recorder: restarted.GetEventRecorderFor("gnmic-operator"),
			Dialer:   &collector.PodIPDialer{HTTP: collector.DefaultHTTPClient()},
		}
		before := clusterReconciles()
		cpu := processCPU()
		began = time.Now()
		op2 := runOperator(restarted, r2)
		DeferCleanup(op2.Stop)
		Eventually(func() float64 { return clusterReconciles().succeeded }).WithTimeout(15 * time.Minute).
			WithPolling(100 * time.Millisecond).Should(BeNumerically(">", before.succeeded))
		firstPass := time.Since(began)
		after := quietReconciles()
		appliesAfter, startsAfter := f.appliesAndStarts(targets)
		GinkgoWriter.Printf("restarted operator: first reconcile done %.1f s after start; %.0f reconcile(s) until quiet, %.2f CPU-s; "+
			"%d writes (%d of Target status), %d configuration pushes, %d target starts\n",
			firstPass.Seconds(), after.count-before.count, processCPU()-cpu, writes.in(f.ns), writes.targetStatusIn(f.ns),
			appliesAfter-applies, startsAfter-starts)
		for _, w := range writes.madeIn(f.ns) {
			GinkgoWriter.Printf("  write: %.3000s\n", w)
		}
		c := f.cluster()
		Expect(c.Status.TargetsCount).To(BeEquivalentTo(targets))
		Expect(appliesAfter-applies).To(BeZero(), "a restarted operator pushes nothing to collectors that run their configuration")
		Expect(startsAfter-starts).To(BeZero(), "a restarted operator restarts no target")
	})
})

// reconcileCounts are the Cluster controller's reconciles so far in this process, from controller-runtime's
// metrics: all of them, those that did not fail, and the seconds they took.
type reconcileCounts struct{ count, succeeded, seconds float64 }

func clusterReconciles() reconcileCounts {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	var out reconcileCounts
	for _, family := range families {
		for _, m := range family.GetMetric() {
			if !hasLabel(m.GetLabel(), "controller", "cluster") {
				continue
			}
			switch family.GetName() {
			case "controller_runtime_reconcile_total":
				out.count += m.GetCounter().GetValue()
				if !hasLabel(m.GetLabel(), "result", "error") {
					out.succeeded += m.GetCounter().GetValue()
				}
			case "controller_runtime_reconcile_time_seconds":
				out.seconds += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

func hasLabel(labels []*dto.LabelPair, name, value string) bool {
	for _, l := range labels {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// quietReconciles waits until the Cluster controller has not reconciled for a second, and gives its counts.
func quietReconciles() reconcileCounts {
	var last reconcileCounts
	Eventually(func() bool {
		now := clusterReconciles()
		quiet := now.count == last.count
		last = now
		return quiet
	}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(BeTrue())
	return last
}

// processCPU is the CPU time this process (operator, fake collectors and test) has used, in seconds.
func processCPU() float64 {
	var usage syscall.Rusage
	Expect(syscall.Getrusage(syscall.RUSAGE_SELF, &usage)).To(Succeed())
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
}

// appliesAndStarts are the configurations the fleet's collectors were pushed and the target starts they made,
// over targets 0..n-1.
func (f *fleet) appliesAndStarts(n int) (applies, starts int) {
	for _, col := range f.collectors {
		applies += col.ApplyCount()
		for i := range n {
			starts += col.Counts(targetName(i)).Starts
		}
	}
	return applies, starts
}

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
