package collector

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// Dialer gives the REST client of one collector pod. tlsConfig is nil for a Cluster that opted out
// of TLS (spec.api.insecure); otherwise it holds the Cluster's CA and the operator's client certificate.
type Dialer interface {
	Client(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, tlsConfig *tls.Config) (*gnmic.Client, error)
	// StreamClient is Client without a request timeout, for the long-lived event stream.
	StreamClient(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, tlsConfig *tls.Config) (*gnmic.Client, error)
}

// PodIPDialer reaches a collector at its pod IP and the Cluster's REST port, the way the operator reaches
// real pods. HTTP is the client for plain-HTTP collectors; tests inject theirs. TLS collectors are verified
// against the pod's DNS name in the headless Service, whatever IP the connection goes to.
type PodIPDialer struct {
	HTTP *http.Client
	// IdleTransportTimeout is how long the TLS transport of a pod the operator stopped calling (scaled away,
	// deleted, or of a deleted Cluster) is kept; zero means DefaultIdleTransportTimeout.
	IdleTransportTimeout time.Duration
	// UserAgent names the operator in every request; empty means gnmic.DefaultUserAgent. A sharded operator
	// names its replica (MemberUserAgent), so that a collector's request log says which replica pushed.
	UserAgent string

	transports podTransports
}

// MemberUserAgent is the User-Agent of a sharded operator replica's requests to collectors: it names the
// member (docs/sharding.md).
func MemberUserAgent(member string) string { return "gnmic-operator (member " + member + ")" }

// DefaultIdleTransportTimeout is far longer than the collector poll interval: the operator calls every
// collector it pushes to at least that often, so only transports of pods that are gone wait this long.
const DefaultIdleTransportTimeout = 10 * time.Minute

// DefaultHTTPClient bounds every collector call: apply answers in milliseconds, so a collector that does not
// answer within the timeout is treated as failing rather than blocking the reconcile.
func DefaultHTTPClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second}
}

// Client implements Dialer.
func (d *PodIPDialer) Client(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, tlsConfig *tls.Config) (*gnmic.Client, error) {
	return d.client(cluster, pod, tlsConfig, false)
}

// StreamClient implements Dialer.
func (d *PodIPDialer) StreamClient(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, tlsConfig *tls.Config) (*gnmic.Client, error) {
	return d.client(cluster, pod, tlsConfig, true)
}

func (d *PodIPDialer) client(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, tlsConfig *tls.Config, stream bool) (*gnmic.Client, error) {
	if pod.Status.PodIP == "" {
		return nil, fmt.Errorf("pod %s has no IP yet", pod.Name)
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	port := cluster.Spec.API.RestPort
	if port == 0 {
		port = workload.DefaultRestPort
	}
	base := scheme + "://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port)))
	httpClient := d.HTTP
	if httpClient == nil {
		httpClient = DefaultHTTPClient()
	}
	if tlsConfig != nil {
		httpClient = d.tlsClient(cluster, pod, tlsConfig, httpClient.Timeout)
	}
	if stream {
		unbounded := *httpClient
		unbounded.Timeout = 0
		httpClient = &unbounded
	}
	c, err := gnmic.NewClient(base, httpClient, gnmic.WithUserAgent(d.UserAgent))
	if err != nil {
		return nil, fmt.Errorf("collector client for pod %s: %w", pod.Name, err)
	}
	return c, nil
}

func (d *PodIPDialer) tlsClient(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, tlsConfig *tls.Config, timeout time.Duration) *http.Client {
	idle := d.IdleTransportTimeout
	if idle == 0 {
		idle = DefaultIdleTransportTimeout
	}
	transport := d.transports.get(cluster, pod, tlsConfig, time.Now(), idle)
	return &http.Client{Transport: transport, Timeout: timeout}
}

// Transports is how many TLS transports the dialer keeps for collector pods of the namespace: at most one per
// pod it called within the idle timeout. It lets tests and debugging see that transports are reused.
func (d *PodIPDialer) Transports(namespace string) int {
	return d.transports.count(namespace)
}
