package controllers

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// CollectorDialer gives the REST client of one collector pod. tlsConfig is nil for a Cluster without
// spec.api.tls; otherwise it holds the Cluster's CA and the operator's client certificate.
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

	// transports keeps one TLS transport per pod and client configuration, so connections are reused.
	transports sync.Map
}

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
	c, err := gnmic.NewClient(base, httpClient)
	if err != nil {
		return nil, fmt.Errorf("collector client for pod %s: %w", pod.Name, err)
	}
	return c, nil
}

func (d *PodIPDialer) tlsClient(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod, tlsConfig *tls.Config, timeout time.Duration) *http.Client {
	type key struct {
		pod    string
		config *tls.Config
	}
	k := key{pod: cluster.Namespace + "/" + pod.Name, config: tlsConfig}
	if t, ok := d.transports.Load(k); ok {
		return &http.Client{Transport: t.(*http.Transport), Timeout: timeout}
	}
	ordinal, _ := workload.PodOrdinal(cluster, pod.Name)
	cfg := tlsConfig.Clone()
	cfg.ServerName = workload.PodHost(cluster, ordinal)
	transport := &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second}
	actual, _ := d.transports.LoadOrStore(k, transport)
	return &http.Client{Transport: actual.(*http.Transport), Timeout: timeout}
}
