//go:build e2e

package harness

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestOperatorRunsAsItsManifestsDeploy installs the operator from config/default and from the bundle's CSV
// and checks what the pod emulator promises: the replicas the Deployment asks for, each its own process in
// its pod's sandbox; one leader; the metrics API and the Prometheus endpoint answering from every replica; a
// rollout that replaces the replicas one at a time, as the manifests' strategy asks, and a pod deletion,
// neither failing a metrics API request.
func TestOperatorRunsAsItsManifestsDeploy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	for _, manifests := range []OperatorManifests{ConfigDefault, BundleCSV} {
		t.Run(string(manifests), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			cp, err := Start(ctx, Options{Dir: testDir(t), Nodes: 2, PodCIDR: testPodCIDR(), Log: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer cp.Stop()
			started := time.Now()
			if err := cp.StartOperator(ctx, OperatorOptions{Manifests: manifests}); err != nil {
				t.Fatal(err)
			}
			t.Logf("operator installed and serving its metrics APIs after %s", time.Since(started).Round(100*time.Millisecond))
			checkReplicas(ctx, t, cp)
			for _, r := range cp.OperatorReplicas() {
				checkSandbox(t, cp, r)
			}
			checkRollout(ctx, t, cp)
			checkPodDeletion(ctx, t, cp)
		})
	}
}

func checkReplicas(ctx context.Context, t *testing.T, cp *ControlPlane) {
	replicas := cp.OperatorReplicas()
	if len(replicas) != 2 {
		t.Fatalf("want the manifests' 2 replicas, got %+v", replicas)
	}
	pids := map[int]bool{}
	for _, r := range replicas {
		if r.PID == 0 || !r.Ready || pids[r.PID] {
			t.Errorf("replica %+v: want its own running, ready container", r)
		}
		pids[r.PID] = true
	}

	var lease LeaderLease
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		lease, err = cp.OperatorLeader(ctx)
		return err == nil && lease.Pod != "", nil
	})
	if err != nil {
		t.Fatalf("no leader: %v", err)
	}
	if lease.Pod != replicas[0].Pod && lease.Pod != replicas[1].Pod {
		t.Errorf("leader %q is not one of the operator pods %+v (its hostname must be its pod's name)", lease.Holder, replicas)
	}

	for _, r := range replicas {
		body, err := cp.MetricsAPIGet(ctx, r.Pod, "/apis/external.metrics.k8s.io/v1beta1")
		if err != nil {
			t.Errorf("metrics API of %s: %v", r.Pod, err)
			continue
		}
		var list metav1.APIResourceList
		if err := json.Unmarshal(body, &list); err != nil || len(list.APIResources) == 0 {
			t.Errorf("metrics API of %s: want its resources, got %s (%v)", r.Pod, body, err)
		}
		metrics, err := cp.OperatorMetrics(ctx, r.Pod)
		if err != nil {
			t.Errorf("Prometheus endpoint of %s: %v", r.Pod, err)
			continue
		}
		// A replica that never led has no series at all.
		leads := strings.Contains(metrics, `leader_election_master_status{name="`+OperatorLeaseName+`"} 1`)
		if leads != (r.Pod == lease.Pod) {
			t.Errorf("replica %s: leader_election_master_status says leading=%t, the Lease says %s leads", r.Pod, leads, lease.Pod)
		}
	}
}

// testPodCIDR is $E2E_POD_CIDR, else PodCIDR: another suite running on the same machine needs another range.
func testPodCIDR() string {
	if cidr := os.Getenv("E2E_POD_CIDR"); cidr != "" {
		return cidr
	}
	return PodCIDR
}

// testDir is a new directory under $E2E_STATE_DIR when set (kept for inspection), else a temporary one.
func testDir(t *testing.T) string {
	root := os.Getenv("E2E_STATE_DIR")
	if root == "" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp(root, strings.ReplaceAll(t.Name(), "/", "-")+"-")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkSandbox looks at a replica's process from the host: it runs as the image's non-root user without
// privileges, every path it may not write is read-only (the root, /tmp, its working directory, the token),
// the certificate volume is writable and holds the certificate, none of its mounts shows on the host, its
// only credential is its pod's token, and the admin kubeconfig is out of its sight.
func checkSandbox(t *testing.T, cp *ControlPlane, r Replica) {
	t.Helper()
	proc := filepath.Join("/proc", strconv.Itoa(r.PID))
	status, err := os.ReadFile(filepath.Join(proc, "status"))
	if err != nil {
		t.Fatalf("replica %s: %v", r.Pod, err)
	}
	for _, want := range []string{"Uid:\t65532\t65532\t65532\t65532", "Gid:\t65532\t65532\t65532\t65532", "NoNewPrivs:\t1", "CapEff:\t0000000000000000"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("replica %s: /proc status lacks %q", r.Pod, want)
		}
	}
	root := filepath.Join(proc, "root")
	for _, path := range []string{root, filepath.Join(root, "tmp"), filepath.Join(proc, "cwd"), filepath.Join(root, "var/run/secrets/kubernetes.io/serviceaccount")} {
		err := os.WriteFile(filepath.Join(path, "probe"), nil, 0o600)
		if !errors.Is(err, syscall.EROFS) {
			t.Errorf("replica %s: writing into %s: want a read-only file system, got %v", r.Pod, path, err)
		}
	}
	certs := filepath.Join(root, "tmp/gnmic-operator-metrics-api")
	if _, err := os.Stat(filepath.Join(certs, "tls.crt")); err != nil {
		t.Errorf("replica %s: serving certificate: %v", r.Pod, err)
	}
	if err := os.WriteFile(filepath.Join(certs, "probe"), nil, 0o600); err != nil {
		t.Errorf("replica %s: the certificate volume must be writable: %v", r.Pod, err)
	}
	os.Remove(filepath.Join(certs, "probe"))
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err != nil || strings.Contains(string(mounts), cp.Dir) {
		t.Errorf("a sandbox's mount leaked into the host's mount namespace (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(root, cp.Kubeconfig)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("replica %s: the admin kubeconfig must be out of sight, stat says %v", r.Pod, err)
	}
	environ, err := os.ReadFile(filepath.Join(proc, "environ"))
	if err != nil {
		t.Fatalf("replica %s: %v", r.Pod, err)
	}
	env := strings.Split(string(environ), "\x00")
	for _, kv := range env {
		if strings.HasPrefix(kv, "KUBECONFIG=") {
			t.Errorf("replica %s: has %s", r.Pod, kv)
		}
	}
	for _, want := range []string{"POD_NAMESPACE=" + OperatorNamespace, "HOSTNAME=" + r.Pod, "KUBERNETES_SERVICE_HOST=127.0.0.1"} {
		if !slices.Contains(env, want) {
			t.Errorf("replica %s: environment lacks %s", r.Pod, want)
		}
	}
	token, err := os.ReadFile(filepath.Join(root, "var/run/secrets/kubernetes.io/serviceaccount/token"))
	if err != nil {
		t.Fatalf("replica %s: token: %v", r.Pod, err)
	}
	parts := strings.Split(string(token), ".")
	if len(parts) != 3 {
		t.Fatalf("replica %s: token is not a JWT", r.Pod)
	}
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("replica %s: token claims: %v", r.Pod, err)
	}
	var jwt struct {
		Subject    string `json:"sub"`
		Kubernetes struct {
			Pod struct{ Name string } `json:"pod"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(claims, &jwt); err != nil {
		t.Fatalf("replica %s: token claims: %v", r.Pod, err)
	}
	if jwt.Subject != "system:serviceaccount:"+OperatorNamespace+":gnmic-operator-controller-manager" || jwt.Kubernetes.Pod.Name != r.Pod {
		t.Errorf("replica %s: want a token of the operator's ServiceAccount bound to its pod, got %s", r.Pod, claims)
	}
}

// checkPodDeletion deletes one operator pod: its process ends (SIGTERM), its object goes once it did, and
// the ReplicaSet's replacement runs and becomes ready. No metrics API request through kube-apiserver fails
// meanwhile: the deleted replica drains, its replacement is Ready once it serves.
func checkPodDeletion(ctx context.Context, t *testing.T, cp *ControlPlane) {
	t.Helper()
	victim := cp.OperatorReplicas()[0]
	requests := cp.MonitorMetricsAPI(ctx, "", 50*time.Millisecond)
	defer requests.Stop()
	started := time.Now()
	if err := cp.Clientset.CoreV1().Pods(OperatorNamespace).Delete(ctx, victim.Pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := cp.Clientset.CoreV1().Pods(OperatorNamespace).Get(ctx, victim.Pod, metav1.GetOptions{}); err == nil {
			return false, nil
		}
		ready := 0
		for _, r := range cp.OperatorReplicas() {
			if r.Pod == victim.Pod {
				return false, nil
			}
			if r.Ready {
				ready++
			}
		}
		return ready == 2, nil
	})
	if err != nil {
		t.Fatalf("after deleting %s: %v (replicas %+v)", victim.Pod, err, cp.OperatorReplicas())
	}
	metrics := requests.Stop()
	t.Logf("pod %s replaced in %s; metrics API through kube-apiserver: %d requests, %d failed",
		victim.Pod, time.Since(started).Round(100*time.Millisecond), metrics.Requests, metrics.Failures)
	if metrics.Failures > 0 {
		t.Errorf("%d of %d metrics API requests failed while a pod was deleted and replaced: %v", metrics.Failures, metrics.Requests, metrics.FailureLog)
	}
	if err := syscall.Kill(victim.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the deleted pod's process %d still runs", victim.PID)
	}
}
