package controllers_test

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// soakSample is one point of the soak's curve.
type soakSample struct {
	Minute float64 `json:"minute"`
	// HeapMiB is the Go heap in use after a collection, RSSMiB the process's resident memory (both for the
	// whole test process: the operator, the fake collectors and the test's clients).
	HeapMiB    float64 `json:"heapInUseMiB"`
	RSSMiB     float64 `json:"rssMiB"`
	Goroutines int     `json:"goroutines"`
	Targets    int     `json:"targets"`
	Created    int     `json:"targetsCreatedSoFar"`
	Restarts   int     `json:"collectorRestartsSoFar"`
}

// The soak: `make soak` (SOAK_DURATION, default 1h; not part of `make test`). An operator with TLS to its
// collectors runs a fleet whose Targets are replaced all the time, whose devices go down and come back, whose
// collector containers restart, next to Clusters that come and go; the process's heap and goroutines must
// stay flat. The curve goes to test/e2e/results/soak.json and docs/fleet.md.
var _ = Describe("Soak: an hour of churn with TLS on", func() {
	It("keeps the heap and the goroutines flat while Targets, devices, collectors and Clusters churn", func() {
		duration, err := time.ParseDuration(os.Getenv("SOAK_DURATION"))
		if err != nil || duration <= 0 {
			Skip("SOAK_DURATION is not set")
		}
		sampleEvery := max(duration/60, 10*time.Second)

		// What the test keeps must not grow with the hours: the operator's log lines, the record of what each of
		// its writes carried, and the fake collectors' record of every apply and request.
		logs.Discard(true)
		DeferCleanup(logs.Discard, false)
		op := startOperatorPolling(10 * time.Second)
		DeferCleanup(op.Stop)
		op.writes.keepCountsOnly()
		f := startFleet(3, nil, "", true, fakecollector.WithHistory(20))
		const size = 300
		f.addTargets(0, size)
		f.converged(size, 0)

		rng := rand.New(rand.NewPCG(1, 2))
		oldest, next := 0, size // the live Targets are oldest..next-1
		down := map[int]bool{}
		restarts := 0
		var samples []soakSample
		began := time.Now()
		lastSample, lastChurn, lastFlap, lastRestart, lastSideCluster := began, began, began, began, began
		var side *fleet
		sample := func() {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			s := soakSample{Minute: time.Since(began).Minutes(), HeapMiB: float64(ms.HeapInuse) / (1 << 20),
				RSSMiB: processRSSMiB(), Goroutines: runtime.NumGoroutine(), Targets: next - oldest, Created: next,
				Restarts: restarts}
			samples = append(samples, s)
			GinkgoWriter.Printf("soak %5.1f min: heap %6.1f MiB, RSS %6.1f MiB, %4d goroutines, %d targets (%d created), %d collector restarts\n",
				s.Minute, s.HeapMiB, s.RSSMiB, s.Goroutines, s.Targets, s.Created, s.Restarts)
		}
		sample()
		for time.Since(began) < duration {
			time.Sleep(time.Second)
			now := time.Now()
			if now.Sub(lastChurn) >= 5*time.Second { // 10 Targets replaced by 10 new ones
				lastChurn = now
				for range 10 {
					f.deleteTarget(oldest)
					delete(down, oldest)
					oldest++
				}
				f.addTargets(next, 10)
				next += 10
			}
			if now.Sub(lastFlap) >= 15*time.Second { // devices go down and come back
				lastFlap = now
				for i := range down {
					for _, col := range f.collectors {
						col.DeviceUp(targetName(i))
					}
					delete(down, i)
				}
				for range 5 {
					i := oldest + rng.IntN(next-oldest)
					down[i] = true
					for _, col := range f.collectors {
						col.DeviceDown(targetName(i), "connection refused")
					}
				}
			}
			if now.Sub(lastRestart) >= 5*time.Minute { // a collector container restarts: new process, new TLS session
				lastRestart = now
				f.restartContainer(restarts % len(f.collectors))
				restarts++
			}
			if now.Sub(lastSideCluster) >= 3*time.Minute { // a Cluster comes, another goes
				lastSideCluster = now
				if side != nil {
					side.close()
					side = nil
				} else {
					side = startFleet(1, nil, "", false, fakecollector.WithHistory(20))
					side.addTargets(0, 20)
				}
			}
			if now.Sub(lastSample) >= sampleEvery {
				lastSample = now
				sample()
			}
		}
		if side != nil {
			side.close()
		}
		for i := range down {
			for _, col := range f.collectors {
				col.DeviceUp(targetName(i))
			}
		}
		f.converged(next-oldest, 0)
		sample()

		dir := filepath.Join(testenv.RepoRoot(), "test", "e2e", "results")
		Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		data, err := json.MarshalIndent(map[string]any{"scenario": "soak", "duration": duration.String(), "samples": samples}, "", "  ")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "soak.json"), append(data, '\n'), 0o644)).To(Succeed())

		// Flat: the last sample against the one a tenth of the way in (after caches and connections warmed up).
		warm := samples[max(1, len(samples)/10)]
		last := samples[len(samples)-1]
		Expect(last.Goroutines).To(BeNumerically("<=", warm.Goroutines+40), "goroutines grew")
		Expect(last.HeapMiB).To(BeNumerically("<=", warm.HeapMiB*1.25+8), "heap in use grew")
	})
})

// processRSSMiB is this process's resident set size.
func processRSSMiB() float64 {
	file, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		if rest, ok := strings.CutPrefix(scanner.Text(), "VmRSS:"); ok {
			kib, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kib) / 1024
		}
	}
	return 0
}
