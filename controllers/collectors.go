package controllers

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// CollectorDialer gives the REST client of one collector pod. tlsConfig is nil for a Cluster that opted out
// of TLS (spec.api.insecure); otherwise it holds the Cluster's CA and the operator's client certificate.
type CollectorDialer interface {
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
	// names its replica (ShardUserAgent), so that a collector's request log says which replica pushed.
	UserAgent string

	transports podTransports
}

// DefaultIdleTransportTimeout is far longer than the collector poll interval: the operator calls every
// collector it pushes to at least that often, so only transports of pods that are gone wait this long.
const DefaultIdleTransportTimeout = 10 * time.Minute

// DefaultHTTPClient bounds every collector call: apply answers in milliseconds, so a collector that does not
// answer within the timeout is treated as failing rather than blocking the reconcile.
func DefaultHTTPClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second}
}

// Client implements CollectorDialer.
func (d *PodIPDialer) Client(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, tlsConfig *tls.Config) (*gnmic.Client, error) {
	return d.client(cluster, pod, tlsConfig, false)
}

// StreamClient implements CollectorDialer.
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
		port = 7890
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

// podTransports keeps one TLS transport per collector pod, so that its connections (and TLS sessions) are
// reused from one reconcile to the next. A pod's transport is replaced when the pod was recreated or its
// client configuration presents another certificate or trusts another CA (a renewal), and dropped once
// nobody asked for it for the idle timeout; the idle connections of a replaced or dropped transport are
// closed.
type podTransports struct {
	mu        sync.Mutex
	byPod     map[string]*podTransport
	lastSweep time.Time
}

type podTransport struct {
	uid       types.UID
	config    *tls.Config
	transport *http.Transport
	used      time.Time
}

func (p *podTransports) get(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, config *tls.Config, now time.Time, idle time.Duration) *http.Transport {
	key := pod.Namespace + "/" + pod.Name
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweep(now, idle)
	if t, ok := p.byPod[key]; ok {
		if t.uid == pod.UID && sameClientTLS(t.config, config) {
			t.used = now
			return t.transport
		}
		t.transport.CloseIdleConnections()
	}
	if p.byPod == nil {
		p.byPod = map[string]*podTransport{}
	}
	ordinal, _ := workload.PodOrdinal(cluster, pod.Name)
	cfg := config.Clone()
	cfg.ServerName = workload.PodHost(cluster, ordinal)
	t := &podTransport{uid: pod.UID, config: config, used: now,
		transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second}}
	p.byPod[key] = t
	return t.transport
}

// sweep drops the transports nobody asked for within idle, looking at most twice per idle period.
func (p *podTransports) sweep(now time.Time, idle time.Duration) {
	if now.Sub(p.lastSweep) < idle/2 {
		return
	}
	p.lastSweep = now
	for key, t := range p.byPod {
		if now.Sub(t.used) >= idle {
			t.transport.CloseIdleConnections()
			delete(p.byPod, key)
		}
	}
}

func (p *podTransports) count(namespace string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for key := range p.byPod {
		if strings.HasPrefix(key, namespace+"/") {
			n++
		}
	}
	return n
}

// sameClientTLS tells whether two client configurations present the same certificate chain and trust the
// same CAs, whether or not they are the same value.
func sameClientTLS(a, b *tls.Config) bool {
	if a == b {
		return true
	}
	if !a.RootCAs.Equal(b.RootCAs) || len(a.Certificates) != len(b.Certificates) {
		return false
	}
	for i := range a.Certificates {
		if !slices.EqualFunc(a.Certificates[i].Certificate, b.Certificates[i].Certificate, bytes.Equal) {
			return false
		}
	}
	return true
}
