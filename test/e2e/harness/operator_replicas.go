package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// OperatorReplicas lists the operator's pods with their containers' state, by pod name.
func (cp *ControlPlane) OperatorReplicas() []Replica {
	if cp.operator == nil {
		return nil
	}
	return cp.operator.emulator.replicas()
}

// KillOperatorReplica sends SIGKILL to the container of one operator pod, in the middle of whatever it is
// doing, and returns the killed process's PID once it ended. The emulator then restarts the container as a
// kubelet would (at once the first time, then with the crash-loop back-off).
func (cp *ControlPlane) KillOperatorReplica(ctx context.Context, pod string) (int, error) {
	if cp.operator == nil {
		return 0, fmt.Errorf("the operator is not running")
	}
	pid, err := cp.operator.emulator.kill(ctx, pod)
	if err == nil {
		cp.log("killed the container of operator pod %s (pid %d)", pod, pid)
	}
	return pid, err
}

// LeaderLease is the operator's leader election Lease.
type LeaderLease struct {
	// Holder is the holder identity, "<hostname>_<uuid>" for controller-runtime; Pod is its hostname,
	// the pod's name.
	Holder, Pod            string
	AcquireTime, RenewTime time.Time
	Duration               time.Duration
	Transitions            int32
}

// OperatorLeader reads the leader election Lease.
func (cp *ControlPlane) OperatorLeader(ctx context.Context) (LeaderLease, error) {
	lease, err := cp.Clientset.CoordinationV1().Leases(OperatorNamespace).Get(ctx, OperatorLeaseName, metav1.GetOptions{})
	if err != nil {
		return LeaderLease{}, fmt.Errorf("get Lease %s: %w", OperatorLeaseName, err)
	}
	var l LeaderLease
	if h := lease.Spec.HolderIdentity; h != nil {
		l.Holder = *h
		l.Pod, _, _ = strings.Cut(*h, "_")
	}
	if t := lease.Spec.AcquireTime; t != nil {
		l.AcquireTime = t.Time
	}
	if t := lease.Spec.RenewTime; t != nil {
		l.RenewTime = t.Time
	}
	if s := lease.Spec.LeaseDurationSeconds; s != nil {
		l.Duration = time.Duration(*s) * time.Second
	}
	if n := lease.Spec.LeaseTransitions; n != nil {
		l.Transitions = *n
	}
	return l, nil
}

// scraperName is the ServiceAccount the harness scrapes the operator's metrics as, bound to the
// metrics-reader ClusterRole that both installs ship, as docs/operating.md tells Prometheus users to.
const scraperName = "e2e-metrics-scraper"

// OperatorMetrics scrapes one replica's Prometheus endpoint as Prometheus would, at its pod IP and the
// container port named metrics, with the token of a ServiceAccount allowed to read it. The endpoint's
// certificate is self-signed and not verified.
func (cp *ControlPlane) OperatorMetrics(ctx context.Context, pod string) (string, error) {
	token, err := cp.scraperToken(ctx)
	if err != nil {
		return "", err
	}
	address, err := cp.replicaAddress(pod, "metrics")
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+address+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // self-signed, as Prometheus' insecure_skip_verify
	}}
	return readOK(client, req)
}

func (cp *ControlPlane) scraperToken(ctx context.Context) (string, error) {
	if cp.operator.scraper != "" {
		return cp.operator.scraper, nil
	}
	core, rbac := cp.Clientset.CoreV1(), cp.Clientset.RbacV1()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: OperatorNamespace, Name: scraperName}}
	if _, err := core.ServiceAccounts(OperatorNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create ServiceAccount %s: %w", scraperName, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: scraperName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gnmic-operator-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: OperatorNamespace, Name: scraperName}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create ClusterRoleBinding %s: %w", scraperName, err)
	}
	token, err := core.ServiceAccounts(OperatorNamespace).CreateToken(ctx, scraperName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of ServiceAccount %s: %w", scraperName, err)
	}
	cp.operator.scraper = token.Status.Token
	return cp.operator.scraper, nil
}

// MetricsAPIGet asks one replica's metrics API server directly, at its pod IP and the container port named
// metrics-api, for path. The server's certificate is verified against the CA in the operator's certificate
// Secret, for the Service's name; the admin's client certificate authenticates the request (the server's
// delegated authentication trusts the cluster's client CA).
func (cp *ControlPlane) MetricsAPIGet(ctx context.Context, pod, path string) ([]byte, error) {
	if cp.operator == nil {
		return nil, fmt.Errorf("the operator is not running")
	}
	address, err := cp.replicaAddress(pod, "metrics-api")
	if err != nil {
		return nil, err
	}
	secret, err := cp.Clientset.CoreV1().Secrets(OperatorNamespace).Get(ctx, MetricsAPIService+"-cert", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("metrics API certificate Secret: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		return nil, fmt.Errorf("no CA in Secret %s", secret.Name)
	}
	clientCert, err := tls.X509KeyPair(cp.Config.CertData, cp.Config.KeyData)
	if err != nil {
		return nil, fmt.Errorf("admin client certificate: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+address+path, nil)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{
		RootCAs: roots, Certificates: []tls.Certificate{clientCert}, ServerName: MetricsAPIService + "." + OperatorNamespace + ".svc",
	}}}
	body, err := readOK(client, req)
	return []byte(body), err
}

// replicaAddress is the pod IP and the operator container's port of that name.
func (cp *ControlPlane) replicaAddress(pod, portName string) (string, error) {
	var ip string
	for _, r := range cp.OperatorReplicas() {
		if r.Pod == pod {
			ip = r.IP
		}
	}
	if ip == "" {
		return "", fmt.Errorf("no operator pod %s with an IP", pod)
	}
	port, err := containerPort(&cp.operator.install.deployment.Spec.Template.Spec.Containers[0], portName)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(ip, strconv.Itoa(port)), nil
}

// readOK sends req and returns the body of a 200 answer, an error with the body otherwise.
func readOK(client *http.Client, req *http.Request) (string, error) {
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", req.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("GET %s: %s: %s", req.URL, resp.Status, body)
	}
	return string(body), nil
}
