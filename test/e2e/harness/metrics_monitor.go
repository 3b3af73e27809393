package harness

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// MetricsAPIRequests asks the operator's metrics API through kube-apiserver, as the HorizontalPodAutoscaler
// reaches it (the aggregation layer routes each request to a ready endpoint of the APIService's Service),
// one request after the other with period between them, until Stop. A failure is counted, never retried
// (client-go would retry a GET whose connection broke, or that was answered Retry-After).
type MetricsAPIRequests struct {
	cancel context.CancelFunc
	done   chan struct{}
	start  time.Time

	mu      sync.Mutex
	figures MetricsAPIFigures
}

// MetricsAPIFigures count the requests MetricsAPIRequests made and those that failed, the first 20 failures
// with their time since the start.
type MetricsAPIFigures struct {
	Requests   int      `json:"requests"`
	Failures   int      `json:"failures"`
	FailureLog []string `json:"failureLog,omitempty"`
}

// MetricsAPIPath is the path MonitorMetricsAPI asks when given none: the external metrics API's resource
// list, which kube-apiserver forwards to a replica like any metric.
const MetricsAPIPath = "/apis/external.metrics.k8s.io/v1beta1"

// MonitorMetricsAPI starts asking path (MetricsAPIPath when empty) through kube-apiserver every period.
func (cp *ControlPlane) MonitorMetricsAPI(ctx context.Context, path string, period time.Duration) *MetricsAPIRequests {
	if path == "" {
		path = MetricsAPIPath
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &MetricsAPIRequests{cancel: cancel, done: make(chan struct{}), start: time.Now()}
	client := cp.Clientset.Discovery().RESTClient()
	go func() {
		defer close(m.done)
		for {
			rc, stop := context.WithTimeout(ctx, 10*time.Second)
			sent := time.Now()
			_, err := client.Get().AbsPath(path).MaxRetries(0).DoRaw(rc)
			stop()
			if ctx.Err() != nil {
				return // a request cut short by Stop is not counted
			}
			m.record(sent, err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(period):
			}
		}
	}()
	return m
}

func (m *MetricsAPIRequests) record(sent time.Time, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.figures.Requests++
	if err == nil {
		return
	}
	m.figures.Failures++
	if len(m.figures.FailureLog) < 20 {
		m.figures.FailureLog = append(m.figures.FailureLog, fmt.Sprintf("%.2fs: %v", sent.Sub(m.start).Seconds(), err))
	}
}

// Figures are the counts so far.
func (m *MetricsAPIRequests) Figures() MetricsAPIFigures {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.figures
	f.FailureLog = append([]string(nil), f.FailureLog...)
	return f
}

// Stop ends the requests and returns the counts.
func (m *MetricsAPIRequests) Stop() MetricsAPIFigures {
	m.cancel()
	<-m.done
	return m.Figures()
}
