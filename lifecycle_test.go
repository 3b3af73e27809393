package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// TestReadinessCoversTheMetricsAPIAndShutdownDrainsIt runs the operator binary as its Deployment does (main,
// the signal handler, the manager's probes) against a real kube-apiserver and asks it what the kubelet and
// kube-apiserver's aggregation layer would:
//
//   - while it starts, /readyz and the metrics API, over and over: whenever /readyz answers ready, a
//     metrics API request made right after must be served (a kubelet would put the pod's endpoint into the
//     Service the moment its probe passes);
//   - on SIGTERM, the metrics API keeps serving every request for the first second (up to 3 s until /readyz
//     said not ready on a slow machine; the default drain lasts 5 s), /readyz stops answering ready while it
//     does, and the process then exits on its own, 0.
//
// Every metrics request opens its own connection: each one shows that the listener accepts.
func TestReadinessCoversTheMetricsAPIAndShutdownDrainsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	pki := t.TempDir()
	aggregation, err := testenv.AggregationLayerArgs(pki)
	if err != nil {
		t.Fatal(err)
	}
	env, cfg, err := testenv.Start(testenv.Options{APIServerArgs: aggregation})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	}()
	const namespace = "gnmic-operator-system"
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeTestKubeconfig(t, cfg, kubeconfig)
	probePort, apiPort := freeTCPPort(t), freeTCPPort(t)
	op := startOperatorProcess(t, filepath.Join(dir, "operator.log"),
		"--kubeconfig="+kubeconfig,
		"--leader-election-namespace="+namespace,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probePort),
		"--metrics-bind-address=0",
		"--metrics-api-bind-address=127.0.0.1",
		fmt.Sprintf("--metrics-api-port=%d", apiPort),
		"--metrics-api-cert-dir="+filepath.Join(dir, "certs"),
		"--metrics-api-service-namespace="+namespace,
		"--metrics-api-manage-apiservices=false",
		fmt.Sprintf("--targetsource-push-bind-address=127.0.0.1:%d", freeTCPPort(t)),
	)
	defer op.kill()

	readyz := probeClient(fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort))
	metrics := metricsAPIClient(t, pki, fmt.Sprintf("https://127.0.0.1:%d/apis/external.metrics.k8s.io/v1beta1", apiPort))

	// Start: every "ready" must be backed by a metrics API that serves.
	var (
		readyAnswers, served, refused int
		readyButRefused               []string
		firstReady, firstServed       time.Time
		started                       = time.Now()
	)
	for served < 20 {
		if op.exited() {
			t.Fatalf("the operator exited while starting: %v\n%s", op.err, op.logTail(40))
		}
		if ctx.Err() != nil {
			t.Fatalf("the metrics API never served 20 requests after /readyz said ready (%d ready answers)\n%s", readyAnswers, op.logTail(40))
		}
		if readyz() != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		readyAnswers++
		if firstReady.IsZero() {
			firstReady = time.Now()
		}
		if err := metrics(); err != nil {
			refused++
			if len(readyButRefused) < 5 {
				readyButRefused = append(readyButRefused, fmt.Sprintf("%.2fs after the first ready answer: %v", time.Since(firstReady).Seconds(), err))
			}
			continue
		}
		if firstServed.IsZero() {
			firstServed = time.Now()
		}
		served++
	}
	t.Logf("start: first ready answer %.2fs after start, metrics API first served %.2fs after it; %d ready answers, "+
		"%d requests after one: %d served, %d not", firstReady.Sub(started).Seconds(), firstServed.Sub(firstReady).Seconds(),
		readyAnswers, served+refused, served, refused)
	if refused > 0 {
		t.Errorf("/readyz answered ready while the metrics API did not serve (%d times), first: %s", refused, strings.Join(readyButRefused, "; "))
	}

	// Shutdown: the first second after SIGTERM, longer if the process was slow to say not ready (a busy
	// machine), never past 3 s: the default drain lasts 5.
	if err := op.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sigterm := time.Now()
	var (
		requests, failed, servedAfterNotReady int
		failures                              []string
		notReadyAt                            time.Duration
	)
	for window := time.Second; time.Since(sigterm) < window; {
		if notReadyAt == 0 || servedAfterNotReady < 20 {
			window = 3 * time.Second
		} else {
			window = time.Second
		}
		err := metrics()
		requests++
		at := time.Since(sigterm)
		if err != nil {
			failed++
			if len(failures) < 5 {
				failures = append(failures, fmt.Sprintf("%.2fs after SIGTERM: %v", at.Seconds(), err))
			}
		} else if notReadyAt > 0 {
			servedAfterNotReady++
		}
		if notReadyAt == 0 && readyz() != nil {
			notReadyAt = time.Since(sigterm)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("shutdown: %d metrics API requests in the %.1fs after SIGTERM, %d failed; not ready %.2fs after SIGTERM, %d requests served after",
		requests, time.Since(sigterm).Seconds(), failed, notReadyAt.Seconds(), servedAfterNotReady)
	if failed > 0 {
		t.Errorf("%d metrics API requests failed right after SIGTERM, first: %s", failed, strings.Join(failures, "; "))
	}
	if notReadyAt == 0 || servedAfterNotReady == 0 {
		t.Errorf("/readyz must stop answering ready while the metrics API still serves (not ready after %s, %d requests served after)",
			notReadyAt, servedAfterNotReady)
	}

	select {
	case <-op.done:
	case <-time.After(time.Minute):
		t.Fatalf("the operator did not exit within a minute of SIGTERM\n%s", op.logTail(40))
	}
	t.Logf("the operator exited %.2fs after SIGTERM: %v", time.Since(sigterm).Seconds(), op.err)
	if op.err != nil {
		t.Errorf("the operator's exit after SIGTERM: %v\n%s", op.err, op.logTail(40))
	}
}

// operatorProcess is the test binary running main() with the given arguments (TestMain's runMainEnv).
type operatorProcess struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startOperatorProcess(t *testing.T, logPath string, args ...string) *operatorProcess {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainEnv+"_ARGS="+strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	p := &operatorProcess{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p
}

func (p *operatorProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *operatorProcess) kill() {
	if !p.exited() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *operatorProcess) logTail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// probeClient asks url as a kubelet's HTTP probe does: a new connection, 1 s timeout, 2xx or 3xx passes.
func probeClient(url string) func() error {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	return func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("%s answered %d", url, resp.StatusCode)
		}
		return nil
	}
}

// metricsAPIClient GETs url as kube-apiserver's aggregation layer does for the HorizontalPodAutoscaler: with
// the front-proxy client certificate and the caller, here an administrator, in the X-Remote-* headers.
// Anything but 200 fails.
func metricsAPIClient(t *testing.T, pki, url string) func() error {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, testenv.FrontProxyClientCert), filepath.Join(pki, testenv.FrontProxyClientKey))
	if err != nil {
		t.Fatalf("front-proxy client certificate: %v", err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		// The serving certificate is issued by the operator's own CA, in its Secret: what is checked here is
		// that the listener serves, not who it is. The client certificate goes with every handshake, whatever
		// CAs the server hints at, as client-go's transports send theirs.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }},
	}}
	return func() error {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-Remote-User", "hpa-test")
		req.Header.Set("X-Remote-Group", "system:masters")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return fmt.Errorf("answered %d: %s", resp.StatusCode, body)
		}
		return nil
	}
}

// writeTestKubeconfig writes cfg, envtest's admin connection, as a kubeconfig file.
func writeTestKubeconfig(t *testing.T, cfg *rest.Config, path string) {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
}

// freeTCPPort is a loopback port nothing listens on right now.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
