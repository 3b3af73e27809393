package controllers

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// CollectorDialer gives the REST client of one collector pod.
type CollectorDialer interface {
	Client(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod) (*gnmic.Client, error)
}

// PodIPDialer reaches a collector at its pod IP and the Cluster's REST port, the way the operator reaches
// real pods. HTTP is the transport used for every pod; tests inject theirs.
type PodIPDialer struct {
	HTTP *http.Client
}

// DefaultHTTPClient bounds every collector call: apply answers in milliseconds, so a collector that does not
// answer within the timeout is treated as failing rather than blocking the reconcile.
func DefaultHTTPClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second}
}

// Client implements CollectorDialer.
func (d PodIPDialer) Client(cluster *operatorv1alpha1.Cluster, pod *corev1.Pod) (*gnmic.Client, error) {
	if pod.Status.PodIP == "" {
		return nil, fmt.Errorf("pod %s has no IP yet", pod.Name)
	}
	scheme := "http"
	if cluster.Spec.API.TLS != nil {
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
	c, err := gnmic.NewClient(base, httpClient)
	if err != nil {
		return nil, fmt.Errorf("collector client for pod %s: %w", pod.Name, err)
	}
	return c, nil
}
