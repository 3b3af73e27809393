//go:build e2e && scale

package sharding

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// scaleRun is one run of the sharding scale benchmark: one operator configuration over the same fleet.
type scaleRun struct {
	Name     string `json:"name"`
	Replicas int    `json:"replicas"`
	Clusters int    `json:"clusters"`
	Targets  int    `json:"targets"`
	Pods     int    `json:"pods"`
	// ConvergeSeconds runs from the operator's start (every Cluster and Target already created, no
	// collector pod yet) until every target is held by exactly one collector.
	ConvergeSeconds float64 `json:"secondsFromOperatorStartToEveryTargetCollected"`
	// Per replica, by pod: CPU seconds per minute of the steady window, peak RSS (VmHWM) in MiB over the
	// process's life, and Kubernetes API requests per second in the steady window.
	SteadyCPUSecondsPerMinute map[string]float64 `json:"steadyCPUSecondsPerMinute"`
	PeakRSSMiB                map[string]float64 `json:"peakRSSMiB"`
	APIRequestsPerSecond      map[string]float64 `json:"steadyAPIRequestsPerSecond"`
	// APIRequestsByKind is every replica's requests together in the steady window, per second, by verb and
	// resource (kube-apiserver's audit log).
	APIRequestsByKind map[string]float64 `json:"steadyAPIRequestsPerSecondByKind"`
	// ConvergeRequestsByKind is every replica's requests together from the operator's start until every target
	// is collected, by verb and resource: how many writes convergence takes.
	ConvergeRequestsByKind map[string]int     `json:"requestsUntilConvergedByKind,omitempty"`
	ConvergeCPUSeconds     map[string]float64 `json:"cpuSecondsUntilConverged"`
	// OthersCPUSeconds is, from the operator's start until every target is collected, the CPU seconds of each
	// control plane process (etcd, kube-apiserver, ...) and of this test process ("harness": the fake
	// collectors and the pod emulator); MachineBusySeconds is the whole machine's, and MachineCPUSeconds what
	// its cores could give in that time. Where convergence goes when the replicas' share is small.
	OthersCPUSeconds   map[string]float64 `json:"otherCPUSecondsUntilConverged"`
	MachineBusySeconds float64            `json:"machineBusyCPUSecondsUntilConverged"`
	MachineCPUSeconds  float64            `json:"machineCPUSecondsUntilConverged"`
	// HeapTop is, per replica, `go tool pprof -top` of its heap in use at the end of the steady window: what
	// its memory is.
	HeapTop map[string][]string `json:"heapInUseTop,omitempty"`
}

// TestShardingScale (make bench-sharding) runs the same fleet under a singleton operator (leader election,
// one replica, as today) and under three sharded replicas, and compares them. Sized by SHARD_BENCH_CLUSTERS
// (default 500), SHARD_BENCH_TARGETS per Cluster (100) and SHARD_BENCH_PODS per Cluster (2).
func TestShardingScale(t *testing.T) {
	// The harness's clients log through controller-runtime (to stderr here: they may outlive t).
	ctrllog.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	clusters := sizeFromEnv("SHARD_BENCH_CLUSTERS", 500)
	perCluster := sizeFromEnv("SHARD_BENCH_TARGETS", 100)
	pods := sizeFromEnv("SHARD_BENCH_PODS", 2)
	steady := time.Minute
	if d, err := time.ParseDuration(os.Getenv("SHARD_BENCH_STEADY")); err == nil {
		steady = d
	}
	// SHARD_BENCH_SINGLETON_ONLY stops after the singleton, and leaves the results file as it is: a paired run of
	// two builds compares that half from the log.
	halves, record := []int{1, 3}, true
	if os.Getenv("SHARD_BENCH_SINGLETON_ONLY") != "" {
		halves, record = halves[:1], false
	}
	var runs []scaleRun
	for _, replicas := range halves {
		run := runScale(t, replicas, clusters, perCluster, pods, steady)
		runs = append(runs, run)
		b, _ := json.MarshalIndent(runs, "", "  ")
		dir := filepath.Join(harness.RepoRoot(), "test", "e2e", "results")
		if err := os.MkdirAll(dir, 0o755); err == nil && record {
			_ = os.WriteFile(filepath.Join(dir, "sharding-scale.json"), b, 0o644)
		}
		t.Logf("%s", b)
	}
	if len(runs) < 2 {
		return
	}
	single, sharded := runs[0], runs[1]
	t.Logf("convergence: singleton %.1f s, 3 replicas %.1f s (%.2fx faster)", single.ConvergeSeconds,
		sharded.ConvergeSeconds, single.ConvergeSeconds/sharded.ConvergeSeconds)
	for pod, rss := range sharded.PeakRSSMiB {
		t.Logf("replica %s: peak RSS %.0f MiB (%.0f%% of the singleton's), steady CPU %.2f s/min (%.0f%%)", pod, rss,
			100*rss/first(single.PeakRSSMiB), sharded.SteadyCPUSecondsPerMinute[pod],
			100*sharded.SteadyCPUSecondsPerMinute[pod]/first(single.SteadyCPUSecondsPerMinute))
	}
}

func first(m map[string]float64) float64 {
	for _, v := range m {
		return v
	}
	return 0
}

func runScale(t *testing.T, replicas, clusters, perCluster, pods int, steady time.Duration) scaleRun {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	nodes := clusters*pods/200 + 2
	cp, err := harness.Start(ctx, harness.Options{Dir: t.TempDir(), Nodes: nodes, PodCIDR: os.Getenv("E2E_POD_CIDR"),
		Log: func(string, ...any) {}, AuditOperator: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	collectors, err := cp.StartCollectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer collectors.Stop()
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	fleets := make([]harness.Fleet, clusters)
	for i := range fleets {
		fleets[i] = harness.Fleet{Namespace: fmt.Sprintf("scale-%03d", i), Cluster: "telemetry", Replicas: int32(pods)}
		if err := fleets[i].Create(ctx, cp, c); err != nil {
			t.Fatal(err)
		}
		if err := fleets[i].CreateTargets(ctx, cp, 0, perCluster); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d replica(s): created %d Clusters and %d Targets in %s", replicas, clusters, clusters*perCluster,
		time.Since(created).Round(time.Second))

	opts := harness.OperatorOptions{Manifests: harness.ConfigDefault, Replicas: int32(replicas),
		Args: append([]string{"--pprof-bind-address=:" + pprofPort}, harness.OperatorArgsFromEnv()...)}
	name := "singleton (leader election)"
	if replicas > 1 {
		opts.Args = append(opts.Args, "--sharding")
		name = fmt.Sprintf("%d sharded replicas", replicas)
	}
	othersBefore := othersCPUSeconds(cp)
	busyBefore := machineBusySeconds()
	started := time.Now()
	if err := cp.StartOperator(ctx, opts); err != nil {
		t.Fatal(err)
	}
	profiled := profileConvergence(t, cp, name)
	for {
		missing := 0
		for _, f := range fleets {
			seen := map[string]bool{}
			for _, names := range collectors.Targets(f.Namespace) {
				for _, n := range names {
					seen[n] = true
				}
			}
			missing += perCluster - len(seen)
		}
		if missing == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: %d targets still not collected", name, missing)
		}
		time.Sleep(2 * time.Second)
	}
	run := scaleRun{Name: name, Replicas: replicas, Clusters: clusters, Targets: clusters * perCluster, Pods: clusters * pods,
		ConvergeSeconds:           time.Since(started).Seconds(),
		SteadyCPUSecondsPerMinute: map[string]float64{}, PeakRSSMiB: map[string]float64{},
		APIRequestsPerSecond: map[string]float64{}, ConvergeCPUSeconds: map[string]float64{}, APIRequestsByKind: map[string]float64{}}
	run.OthersCPUSeconds = othersCPUSeconds(cp)
	for process := range run.OthersCPUSeconds {
		run.OthersCPUSeconds[process] -= othersBefore[process]
	}
	run.MachineBusySeconds = machineBusySeconds() - busyBefore
	profiled()
	run.MachineCPUSeconds = run.ConvergeSeconds * float64(runtime.NumCPU())
	t.Logf("%s: every target collected %.1f s after the operator started; machine busy %.0f of %.0f CPU-seconds, others %v",
		name, run.ConvergeSeconds, run.MachineBusySeconds, run.MachineCPUSeconds, run.OthersCPUSeconds)

	cpuBefore, requestsBefore := map[string]float64{}, map[string]float64{}
	for _, r := range cp.OperatorReplicas() {
		cpuBefore[r.Pod] = cpuSeconds(r.PID)
		run.ConvergeCPUSeconds[r.Pod] = cpuBefore[r.Pod]
		requestsBefore[r.Pod] = apiRequests(ctx, cp, r.Pod)
	}
	from := time.Now()
	time.Sleep(steady)
	to := time.Now()
	for _, r := range cp.OperatorReplicas() {
		run.SteadyCPUSecondsPerMinute[r.Pod] = (cpuSeconds(r.PID) - cpuBefore[r.Pod]) / steady.Minutes()
		run.PeakRSSMiB[r.Pod] = peakRSSMiB(r.PID)
		run.APIRequestsPerSecond[r.Pod] = (apiRequests(ctx, cp, r.Pod) - requestsBefore[r.Pod]) / steady.Seconds()
	}
	run.HeapTop = map[string][]string{}
	for _, r := range cp.OperatorReplicas() {
		top, err := heapInUseTop(ctx, net.JoinHostPort(r.IP, pprofPort))
		if err != nil {
			t.Logf("%s: no heap profile: %v", r.Pod, err)
			continue
		}
		run.HeapTop[r.Pod] = top
		t.Logf("%s: heap in use\n%s", r.Pod, strings.Join(top, "\n"))
	}
	time.Sleep(time.Second) // the window's last requests reach the audit log
	byKind, err := cp.OperatorRequests(from, to)
	if err != nil {
		t.Fatal(err)
	}
	for kind, n := range byKind {
		run.APIRequestsByKind[string(kind)] = float64(n) / steady.Seconds()
	}
	converging, err := cp.OperatorRequests(started, started.Add(time.Duration(run.ConvergeSeconds*float64(time.Second))))
	if err != nil {
		t.Fatal(err)
	}
	run.ConvergeRequestsByKind = map[string]int{}
	for kind, n := range converging {
		run.ConvergeRequestsByKind[string(kind)] = n
	}
	return run
}

// pprofPort is where the benchmark's operator replicas serve Go's profiling endpoints (--pprof-bind-address).
const pprofPort = "6065"

// profileConvergence saves, when SHARD_BENCH_CPU_PROFILE names a file, a CPU profile of each replica from its
// start over SHARD_BENCH_CPU_PROFILE_SECONDS (default 600: most of a singleton's convergence) in
// <file>.<replicas>.<pod>, and gives a wait that returns once they are saved. Without it, it does nothing.
// Profiling costs the operator a little CPU: compare runs that both profile, or both do not.
func profileConvergence(t *testing.T, cp *harness.ControlPlane, name string) (wait func()) {
	path := os.Getenv("SHARD_BENCH_CPU_PROFILE")
	if path == "" {
		return func() {}
	}
	seconds := sizeFromEnv("SHARD_BENCH_CPU_PROFILE_SECONDS", 600)
	var wg sync.WaitGroup
	replicas := cp.OperatorReplicas()
	for _, r := range replicas {
		out := fmt.Sprintf("%s.%d.%s", path, len(replicas), r.Pod)
		wg.Go(func() {
			if err := harness.SaveCPUProfile(r, pprofPort, seconds, out); err != nil {
				t.Logf("%s: no CPU profile of %s: %v", name, r.Pod, err)
				return
			}
			t.Logf("%s: CPU profile of %s over its first %d s: %s", name, r.Pod, seconds, out)
		})
	}
	return wg.Wait
}

// heapInUseTop is `go tool pprof -top` of the heap in use of the process serving pprof at address: the
// summary and the 20 functions that allocated most of what is still in use.
func heapInUseTop(ctx context.Context, address string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=20",
		"http://"+address+"/debug/pprof/heap").Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof %s: %w", address, err)
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "Fetching") && !strings.HasPrefix(line, "Saved profile") {
			lines = append(lines, line)
		}
	}
	return lines, nil
}

// cpuSeconds is a process's user and system CPU time; 0 once the process is gone.
func cpuSeconds(pid int) float64 {
	t, err := harness.ProcessCPU(pid)
	if err != nil {
		return 0
	}
	return t.Seconds()
}

// othersCPUSeconds is the CPU seconds so far of every control plane process, by name, and of this process
// ("harness").
func othersCPUSeconds(cp *harness.ControlPlane) map[string]float64 {
	out := map[string]float64{"harness": cpuSeconds(os.Getpid())}
	for name, pid := range cp.PIDs() {
		if !strings.HasPrefix(name, "operator/") {
			out[name] = cpuSeconds(pid)
		}
	}
	return out
}

// machineBusySeconds is the CPU seconds every core of the machine has spent on anything but idling and
// waiting for I/O since boot (/proc/stat).
func machineBusySeconds() float64 {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	busy := 0
	for i, f := range fields[1:] {
		if i == 3 || i == 4 || i > 7 {
			continue
		}
		n, _ := strconv.Atoi(f)
		busy += n
	}
	return float64(busy) / 100
}

// peakRSSMiB is a process's peak resident set (VmHWM).
func peakRSSMiB(pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kib, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kib) / 1024
		}
	}
	return 0
}

// apiRequests is the replica's rest_client_requests_total, every code and method (0 when unreadable).
func apiRequests(ctx context.Context, cp *harness.ControlPlane, pod string) float64 {
	total, _ := restRequestsOf(ctx, cp, pod)
	return total
}
