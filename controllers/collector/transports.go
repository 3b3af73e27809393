package collector

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

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
