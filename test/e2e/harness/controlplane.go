package harness

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

//go:embed kwok-stages.yaml
var kwokStages []byte

// KwokNodeAnnotation marks the Nodes kwok manages.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// PodCIDR is where kwok takes pod IPs from by default: loopback, so that fake collectors can listen on
// them. Two control planes on one machine need different ranges (the demo uses DemoPodCIDR).
const PodCIDR = "127.1.0.0/16"

// DemoPodCIDR is the demo's pod range, so that it can run next to the end-to-end suite.
const DemoPodCIDR = "127.2.0.0/16"

// Options configure a control plane.
type Options struct {
	// Dir holds certificates, etcd data, kubeconfig and logs. Empty: a new temporary directory.
	Dir string
	// BinDir holds the control-plane binaries. Empty: the output of hack/control-plane.sh all.
	BinDir string
	// Nodes is the number of fake Nodes (default 3).
	Nodes int
	// PodCIDR is kwok's --cidr (default PodCIDR); it must lie in 127.0.0.0/8.
	PodCIDR string
	// HPASyncPeriod is kube-controller-manager's --horizontal-pod-autoscaler-sync-period (default 5s).
	HPASyncPeriod time.Duration
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
	// WithoutCRDs leaves the operator's CRDs out: a fresh cluster, as `make install` finds it.
	WithoutCRDs bool
	// AuditOperator makes kube-apiserver write an audit log of the operator's requests (OperatorRequests).
	AuditOperator bool
}

// ControlPlane is a running local Kubernetes control plane.
type ControlPlane struct {
	Dir        string
	BinDir     string
	Kubeconfig string
	Config     *rest.Config
	Clientset  *kubernetes.Clientset

	pki   pkiFiles
	procs []*process
	// operator is the installed operator and the emulator running its pods, once StartOperator ran.
	operator *operatorRun
	log      func(format string, args ...any)
	// auditLog is kube-apiserver's audit log of the operator's requests; empty when not audited.
	auditLog string
}

// RepoRoot is the repository's top directory, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Binaries returns the directory with every control-plane binary, building them on first use.
func Binaries() (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "control-plane.sh"), "all")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/control-plane.sh all: %w: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return lines[len(lines)-1], nil
}

// Start runs etcd and kube-apiserver, installs the operator's CRDs, runs kube-controller-manager,
// kube-scheduler and kwok, creates the fake Nodes and returns once Nodes are ready and the default ServiceAccount exists. On error everything
// already started is stopped.
func Start(ctx context.Context, opts Options) (cp *ControlPlane, err error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.PodCIDR == "" {
		opts.PodCIDR = PodCIDR
	}
	if opts.HPASyncPeriod == 0 {
		opts.HPASyncPeriod = 5 * time.Second
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	if opts.BinDir == "" {
		if opts.BinDir, err = Binaries(); err != nil {
			return nil, err
		}
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "gnmic-e2e-"); err != nil {
			return nil, fmt.Errorf("state directory: %w", err)
		}
	}
	for _, sub := range []string{"pki", "logs", "etcd"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", sub, err)
		}
	}
	cp = &ControlPlane{Dir: opts.Dir, BinDir: opts.BinDir, log: opts.Log}
	if opts.AuditOperator {
		cp.auditLog = filepath.Join(opts.Dir, "audit.log")
	}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()

	ports, err := FreePorts(6)
	if err != nil {
		return cp, err
	}
	etcdPort, etcdPeer, apiPort, kcmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	server := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	if cp.pki, err = writePKI(filepath.Join(opts.Dir, "pki"), server); err != nil {
		return cp, err
	}
	cp.Kubeconfig = cp.pki.AdminKubeconfig

	started := time.Now()
	if err := cp.startEtcd(etcdPort, etcdPeer); err != nil {
		return cp, err
	}
	if err := cp.startAPIServer(ctx, apiPort, etcdPort); err != nil {
		return cp, err
	}
	opts.Log("kube-apiserver ready on %s after %s", server, time.Since(started).Round(100*time.Millisecond))
	// CRDs before the controllers: kube-controller-manager's autoscaler then finds the Cluster kind in its
	// first discovery instead of reporting "no matches for kind" until its next refresh.
	if !opts.WithoutCRDs {
		if err := cp.Install(ctx); err != nil {
			return cp, err
		}
	}
	if err := cp.startControllers(opts, kcmPort, schedPort, kwokPort); err != nil {
		return cp, err
	}
	if err := cp.createNodes(ctx, opts.Nodes); err != nil {
		return cp, err
	}
	if err := cp.WaitForServiceAccount(ctx, "default"); err != nil {
		return cp, err
	}
	opts.Log("control plane ready after %s (%d fake nodes)", time.Since(started).Round(100*time.Millisecond), opts.Nodes)
	return cp, nil
}

func (cp *ControlPlane) start(name string, args []string, env ...string) error {
	p, err := startProcess(filepath.Join(cp.Dir, "logs"), name, filepath.Join(cp.BinDir, name), args, env)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	cp.log("started %s (pid %d)", name, p.PID)
	return nil
}

// PIDs lists the processes this control plane started, the operator's containers as "operator/<pod>".
func (cp *ControlPlane) PIDs() map[string]int {
	out := map[string]int{}
	for _, p := range cp.procs {
		out[p.Name] = p.PID
	}
	for _, r := range cp.OperatorReplicas() {
		if r.PID != 0 {
			out["operator/"+r.Pod] = r.PID
		}
	}
	return out
}

func (cp *ControlPlane) startEtcd(port, peer int) error {
	client := "http://127.0.0.1:" + strconv.Itoa(port)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	if err := cp.start("etcd", []string{
		"--name=e2e", "--data-dir=" + filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=e2e=" + peerURL, "--unsafe-no-fsync=true", "--log-level=warn",
	}); err != nil {
		return err
	}
	return cp.waitFor(context.Background(), "etcd", 30*time.Second, func(ctx context.Context) (bool, error) {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return false, nil
		}
		conn.Close()
		return true, nil
	})
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, port, etcdPort int) error {
	f := cp.pki
	audit, err := cp.auditFlags()
	if err != nil {
		return err
	}
	args := []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(etcdPort),
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		// The only address a loopback control plane has; the kubernetes Service's endpoints are not managed.
		"--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
		"--tls-cert-file=" + f.ServingCert, "--tls-private-key-file=" + f.ServingKey,
		"--client-ca-file=" + f.CACert,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f.ServiceAccountPub,
		"--service-account-signing-key-file=" + f.ServiceAccountKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC", "--allow-privileged=true",
		// The aggregation layer, so that the metrics APIs are reached as the autoscaler reaches them.
		"--requestheader-client-ca-file=" + f.FrontProxyCA,
		"--requestheader-allowed-names=" + frontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + f.FrontProxyClientCert, "--proxy-client-key-file=" + f.FrontProxyKey,
		"--enable-aggregator-routing=true",
	}
	if err := cp.start("kube-apiserver", append(args, audit...)); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load admin kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cp.Config = cfg
	if cp.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("clientset: %w", err)
	}
	return cp.waitFor(ctx, "kube-apiserver", 60*time.Second, func(ctx context.Context) (bool, error) {
		body, err := cp.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	})
}

func (cp *ControlPlane) startControllers(opts Options, kcmPort, schedPort, kwokPort int) error {
	f := cp.pki
	if err := cp.start("kube-controller-manager", []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig, "--authorization-kubeconfig=" + cp.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(kcmPort),
		"--leader-elect=false", "--controllers=*", "--use-service-account-credentials=true",
		"--service-account-private-key-file=" + f.ServiceAccountKey, "--root-ca-file=" + f.CACert,
		"--cluster-signing-cert-file=" + f.CACert, "--cluster-signing-key-file=" + f.CAKey,
		"--horizontal-pod-autoscaler-sync-period=" + opts.HPASyncPeriod.String(),
	}); err != nil {
		return err
	}
	if err := cp.start("kube-scheduler", []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig, "--authorization-kubeconfig=" + cp.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(schedPort), "--leader-elect=false",
	}); err != nil {
		return err
	}
	stages := filepath.Join(cp.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o600); err != nil {
		return fmt.Errorf("write kwok stages: %w", err)
	}
	return cp.start("kwok", []string{
		"--kubeconfig=" + cp.Kubeconfig, "--config=" + stages,
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
		"--cidr=" + opts.PodCIDR, "--node-ip=127.0.0.1", "--node-lease-duration-seconds=40",
		"--server-address=127.0.0.1:" + strconv.Itoa(kwokPort),
	})
}

func (cp *ControlPlane) createNodes(ctx context.Context, n int) error {
	nodes := make([]NodeSpec, n)
	for i := range nodes {
		nodes[i] = NodeSpec{Name: fmt.Sprintf("kwok-node-%d", i)}
	}
	return cp.AddNodes(ctx, nodes...)
}

// WaitForServiceAccount waits until the namespace's default ServiceAccount exists: pods cannot be
// created before it (the ServiceAccount admission plugin refuses them).
func (cp *ControlPlane) WaitForServiceAccount(ctx context.Context, namespace string) error {
	return cp.waitFor(ctx, "ServiceAccount "+namespace+"/default", 60*time.Second, func(ctx context.Context) (bool, error) {
		_, err := cp.Clientset.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// waitFor polls check until it holds, failing early when a started process exited.
func (cp *ControlPlane) waitFor(ctx context.Context, what string, timeout time.Duration, check wait.ConditionWithContextFunc) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range cp.procs {
			if done, err := p.exited(); done {
				return false, fmt.Errorf("%s exited (%v), see %s", p.Name, err, filepath.Join(cp.Dir, "logs", p.Name+".log"))
			}
		}
		return check(ctx)
	})
	if err != nil {
		return fmt.Errorf("wait for %s: %w", what, err)
	}
	return nil
}

// Stop ends the operator's containers, then every process in reverse start order. The state directory
// stays for inspection.
func (cp *ControlPlane) Stop() {
	if cp.operator != nil {
		cp.operator.emulator.stop()
	}
	for i := len(cp.procs) - 1; i >= 0; i-- {
		if err := cp.procs[i].stop(10 * time.Second); err != nil {
			cp.log("%v", err)
		}
	}
	cp.procs = nil
}

// FreePorts returns n TCP ports nothing listens on right now on 127.0.0.1. They are drawn from below the
// kernel's ephemeral range (32768–60999 by default), never from it: a port the kernel hands out for ":0" is
// also what it picks for outgoing connections, and one taken by a connection between the check and the
// component's bind makes the component exit with "address already in use".
func FreePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	const low, high = 20000, 32768
	ports := make([]int, 0, n)
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts == 1000 {
			return nil, fmt.Errorf("no free port in [%d, %d) after %d attempts", low, high, attempts)
		}
		port := low + rand.IntN(high-low)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		listeners = append(listeners, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// Connect returns a ControlPlane for one that another process runs (the demo's), to observe and change it;
// its Stop does nothing.
func Connect(kubeconfig, binDir string) (*ControlPlane, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	return &ControlPlane{
		Dir: filepath.Dir(filepath.Dir(kubeconfig)), BinDir: binDir, Kubeconfig: kubeconfig,
		Config: cfg, Clientset: clientset, log: func(string, ...any) {},
	}, nil
}
