//go:build e2e

package olm_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// upgradeMonitor samples, until Stop, the fake collectors every 100 ms (targets on two collectors, targets
// seen off their original pod), the external metrics API through kube-apiserver every 100 ms (none may
// fail), the metrics APIServices every 500 ms (missing ones, owners), and follows each operator pod: when
// its container started, when it became Ready, and (a TCP connect every 100 ms) when its metrics API port
// first accepted a connection. A failed metrics request, should one fail, is put down to its likely cause.
type upgradeMonitor struct {
	mu sync.Mutex
	// Requests and Failures count metrics API requests; FailureLog has the first failures with their time.
	Requests, Failures int
	FailureLog         []string
	failures           []span
	MissingAPIService  int
	OwnerChanges       []string
	Samples, MaxOnTwo  int
	Strays             map[string]string
	lastOwners         string
	pods               map[string]*podTimes
	cancel             context.CancelFunc
	done               sync.WaitGroup
	start              time.Time
	original           map[string]string
	namespace, cluster string
}

type span struct{ from, to time.Time }

// podTimes is what the monitor saw of one operator pod.
type podTimes struct {
	address string // pod IP and metrics API port
	// kwokReady are the spans in which the pod was Ready before its container ran. A kubelet never reports
	// that; the harness's kwok stages leave the emulated pods not Ready until the emulator reports their
	// probe, and the upgrade spec asserts there are none.
	kwokReady []span
	kwokFrom  time.Time
	// started is when its container started, ready when it was first Ready with a container, serving when
	// its metrics API port first accepted a connection, deleted when it was first seen being deleted.
	started, ready, serving, deleted time.Time
}

func monitorUpgrade(f harness.Fleet, operatorNamespace string, original map[string]string) *upgradeMonitor {
	c, cancel := context.WithCancel(ctx)
	m := &upgradeMonitor{cancel: cancel, start: time.Now(), original: original, namespace: f.Namespace, cluster: f.Cluster,
		Strays: map[string]string{}, pods: map[string]*podTimes{}}
	pods := informers.NewSharedInformerFactoryWithOptions(cp.Clientset, 0, informers.WithNamespace(operatorNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "control-plane=controller-manager" })).
		Core().V1().Pods().Informer()
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.observePod(obj) },
		UpdateFunc: func(_, obj any) { m.observePod(obj) },
	})
	Expect(err).NotTo(HaveOccurred())
	go pods.Run(c.Done())
	Expect(cache.WaitForCacheSync(c.Done(), pods.HasSynced)).To(BeTrue())
	every := func(period time.Duration, sample func()) {
		m.done.Add(1)
		go func() {
			defer m.done.Done()
			ticker := time.NewTicker(period)
			defer ticker.Stop()
			for {
				sample()
				select {
				case <-c.Done():
					return
				case <-ticker.C:
				}
			}
		}()
	}
	every(100*time.Millisecond, m.sampleCollectors)
	every(100*time.Millisecond, m.sampleListening)
	every(100*time.Millisecond, func() { m.sampleMetricsAPI(c) })
	every(500*time.Millisecond, func() { m.sampleAPIServices(c) })
	return m
}

func (m *upgradeMonitor) observePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	ready := false
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	container := len(pod.Status.ContainerStatuses) > 0 && pod.Status.ContainerStatuses[0].ContainerID != ""
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pods[pod.Name]
	if p == nil {
		p = &podTimes{}
		m.pods[pod.Name] = p
	}
	if p.address == "" && pod.Status.PodIP != "" {
		for _, port := range pod.Spec.Containers[0].Ports {
			if port.Name == "metrics-api" {
				p.address = net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port.ContainerPort)))
			}
		}
	}
	kwok := harness.ReadyWithoutContainer(pod)
	switch {
	case kwok && p.kwokFrom.IsZero():
		p.kwokFrom = now
	case !kwok && !p.kwokFrom.IsZero():
		p.kwokReady = append(p.kwokReady, span{p.kwokFrom, now})
		p.kwokFrom = time.Time{}
	}
	if container && p.started.IsZero() {
		if running := pod.Status.ContainerStatuses[0].State.Running; running != nil {
			p.started = running.StartedAt.Time
		}
	}
	if container && ready && p.ready.IsZero() {
		p.ready = now
	}
	if pod.DeletionTimestamp != nil && p.deleted.IsZero() {
		p.deleted = now
	}
}

// sampleListening tries the metrics API port of each pod that has a container and was not seen listening.
func (m *upgradeMonitor) sampleListening() {
	m.mu.Lock()
	var try []*podTimes
	for _, p := range m.pods {
		if p.address != "" && !p.started.IsZero() && p.serving.IsZero() {
			try = append(try, p)
		}
	}
	m.mu.Unlock()
	for _, p := range try {
		conn, err := net.DialTimeout("tcp", p.address, 50*time.Millisecond)
		if err != nil {
			continue
		}
		conn.Close()
		m.mu.Lock()
		p.serving = time.Now()
		m.mu.Unlock()
	}
}

func (m *upgradeMonitor) sampleCollectors() {
	held := map[string][]string{}
	for pod, targets := range collectors.Targets(m.namespace) {
		for _, t := range targets {
			held[t] = append(held[t], pod)
		}
	}
	onTwo := 0
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Samples++
	for t, pods := range held {
		if len(pods) > 1 {
			onTwo++
		}
		for _, p := range pods {
			if m.original[t] != "" && p != m.original[t] {
				if _, seen := m.Strays[t]; !seen {
					m.Strays[t] = p
				}
			}
		}
	}
	m.MaxOnTwo = max(m.MaxOnTwo, onTwo)
}

// sampleMetricsAPI asks unassigned_targets as the HPA does, once: client-go's retries are off, so that a
// request the aggregation layer could not forward counts.
func (m *upgradeMonitor) sampleMetricsAPI(c context.Context) {
	rc, cancel := context.WithTimeout(c, 5*time.Second)
	defer cancel()
	sent := time.Now()
	_, err := externalMetricOnce(rc, m.namespace, "unassigned_targets", m.cluster)
	answered := time.Now()
	if c.Err() != nil {
		return
	}
	at := sent.Sub(m.start).Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Requests++
	if err != nil {
		m.Failures++
		m.failures = append(m.failures, span{sent, answered})
		if len(m.FailureLog) < 20 {
			m.FailureLog = append(m.FailureLog, fmt.Sprintf("%.1fs: %v", at, err))
		}
		fmt.Fprintf(GinkgoWriter, "metrics API failed %.1fs into the upgrade: %v\n", at, err)
	}
}

// sampleAPIServices records missing metrics APIServices and each change of their owners.
func (m *upgradeMonitor) sampleAPIServices(c context.Context) {
	rc, cancel := context.WithTimeout(c, 5*time.Second)
	defer cancel()
	owners, ownersErr := apiServiceOwners(rc)
	if c.Err() != nil {
		return
	}
	at := time.Since(m.start).Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	if ownersErr == nil {
		var parts []string
		for _, name := range metricsAPIServices {
			if owners[name] == nil {
				m.MissingAPIService++
				parts = append(parts, name+"=missing")
				continue
			}
			parts = append(parts, name+"="+strings.Join(owners[name], ","))
		}
		now := strings.Join(parts, " ")
		if now != m.lastOwners {
			m.lastOwners = now
			m.OwnerChanges = append(m.OwnerChanges, fmt.Sprintf("%.1fs: %s", at, now))
			fmt.Fprintf(GinkgoWriter, "metrics APIServices %.1fs into the upgrade: %s\n", at, now)
		}
	}
}

// Stop ends sampling.
func (m *upgradeMonitor) Stop() {
	m.cancel()
	m.done.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for _, p := range m.pods {
		if !p.kwokFrom.IsZero() {
			p.kwokReady = append(p.kwokReady, span{p.kwokFrom, now})
			p.kwokFrom = time.Time{}
		}
	}
}

// failureCauses are the likely causes of failed metrics requests, for the report of a failed upgrade: the
// spec asserts that none fails. Both were seen before the operator's readiness covered its metrics API and
// its metrics API drained on shutdown (docs/olm.md).
type failureCauses struct {
	// Terminating: it overlaps the second after a pod was deleted: a pod that stopped serving on SIGTERM
	// while the aggregation layer still routed to it (the drain is there to prevent it).
	Terminating int `json:"withinASecondOfAPodsDeletion"`
	// ReadyBeforeServing: it overlaps a span in which a pod was Ready (its readiness probe passed) while its
	// metrics API port did not accept connections yet: the aggregation layer routes to Ready endpoints.
	ReadyBeforeServing int `json:"whileAPodWasReadyBeforeItsMetricsAPIListened"`
	// Other failures, with their time.
	Other []string `json:"other"`
}

// causes puts each failed request down to its likely cause.
func (m *upgradeMonitor) causes() failureCauses {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c failureCauses
	overlaps := func(f, s span) bool { return !f.to.Before(s.from) && !f.from.After(s.to.Add(time.Second)) }
	for _, f := range m.failures {
		terminating, early := false, false
		for _, p := range m.pods {
			if !p.deleted.IsZero() {
				terminating = terminating || overlaps(f, span{p.deleted, p.deleted})
			}
			if !p.ready.IsZero() {
				until := p.serving
				if until.IsZero() {
					until = time.Now()
				}
				early = early || (p.ready.Before(until) && overlaps(f, span{p.ready, until}))
			}
		}
		switch {
		case terminating:
			c.Terminating++
		case early:
			c.ReadyBeforeServing++
		default:
			c.Other = append(c.Other, fmt.Sprintf("%.1fs", f.from.Sub(m.start).Seconds()))
		}
	}
	return c
}

// readyWithoutProcess lists the spans in which a pod was Ready before its container ran.
func (m *upgradeMonitor) readyWithoutProcess() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for name, p := range m.pods {
		for _, s := range p.kwokReady {
			out = append(out, fmt.Sprintf("%s from %.1fs for %.2fs", name, s.from.Sub(m.start).Seconds(), s.to.Sub(s.from).Seconds()))
		}
	}
	sort.Strings(out)
	return out
}

// podTimeline renders, per pod, the spans it was Ready without a process, and when its container started,
// it became Ready and its metrics API listened, in seconds into the upgrade.
func (m *upgradeMonitor) podTimeline() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%.1fs", t.Sub(m.start).Seconds())
	}
	var out []string
	for name, p := range m.pods {
		line := fmt.Sprintf("%s: container started %s, Ready %s, metrics API listening %s, deleted %s", name, at(p.started), at(p.ready), at(p.serving), at(p.deleted))
		for _, s := range p.kwokReady {
			line += fmt.Sprintf(", Ready without a process from %s for %.2fs", at(s.from), s.to.Sub(s.from).Seconds())
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// strays lists the targets seen on a pod other than their original one.
func (m *upgradeMonitor) strays() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for t, p := range m.Strays {
		out = append(out, t+" on "+p+" (was "+m.original[t]+")")
	}
	slices.Sort(out)
	return out
}
