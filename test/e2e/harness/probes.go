package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// probe runs the container's readiness and liveness probes until ctx ends, as a kubelet's prober does:
// after initialDelaySeconds, every periodSeconds, with timeoutSeconds and the success and failure
// thresholds. A container without a readiness probe is ready once it runs.
func (w *podWorker) probe(ctx context.Context, pod *corev1.Pod, c *corev1.Container, running *runningContainer) {
	if c.ReadinessProbe == nil {
		w.setReady(running, true)
	} else {
		go runProbe(ctx, pod, c, c.ReadinessProbe, func(ready bool) { w.setReady(running, ready) })
	}
	if c.LivenessProbe != nil {
		go runProbe(ctx, pod, c, c.LivenessProbe, func(healthy bool) {
			if !healthy {
				w.markUnhealthy(running)
			}
		})
	}
}

// runProbe reports each change of the probe's verdict (and the first verdict) to report.
func runProbe(ctx context.Context, pod *corev1.Pod, c *corev1.Container, p *corev1.Probe, report func(bool)) {
	period := seconds(p.PeriodSeconds, 10)
	timeout := seconds(p.TimeoutSeconds, 1)
	successes, failures := 1, 3
	if p.SuccessThreshold > 0 {
		successes = int(p.SuccessThreshold)
	}
	if p.FailureThreshold > 0 {
		failures = int(p.FailureThreshold)
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(seconds(p.InitialDelaySeconds, 0)):
	}
	var verdict *bool
	okRun, failRun := 0, 0
	for {
		err := check(ctx, pod, c, p.ProbeHandler, timeout)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			okRun, failRun = okRun+1, 0
		} else {
			okRun, failRun = 0, failRun+1
		}
		switch {
		case okRun >= successes && (verdict == nil || !*verdict):
			v := true
			verdict = &v
			report(true)
		case failRun >= failures && (verdict == nil || *verdict):
			v := false
			verdict = &v
			report(false)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

// check runs one probe: an HTTP GET (2xx and 3xx succeed) or a TCP connection to the pod.
func check(ctx context.Context, pod *corev1.Pod, c *corev1.Container, h corev1.ProbeHandler, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case h.HTTPGet != nil:
		port, err := containerPort(c, h.HTTPGet.Port.String())
		if err != nil {
			return err
		}
		host := h.HTTPGet.Host
		if host == "" {
			host = pod.Status.PodIP
		}
		scheme := "http"
		if h.HTTPGet.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(port))+h.HTTPGet.Path, nil)
		if err != nil {
			return err
		}
		for _, header := range h.HTTPGet.HTTPHeaders {
			req.Header.Add(header.Name, header.Value)
		}
		// A kubelet's HTTPS probes do not verify the certificate either, and open a connection per probe.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("HTTP probe answered %d", resp.StatusCode)
		}
		return nil
	case h.TCPSocket != nil:
		port, err := containerPort(c, h.TCPSocket.Port.String())
		if err != nil {
			return err
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return fmt.Errorf("the pod emulator runs httpGet and tcpSocket probes only")
}

// containerPort resolves a port given by number or by the name of one of the container's ports.
func containerPort(c *corev1.Container, port string) (int, error) {
	if n, err := strconv.Atoi(port); err == nil {
		return n, nil
	}
	for _, p := range c.Ports {
		if p.Name == port {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, port)
}

func seconds(value, fallback int32) time.Duration {
	if value <= 0 {
		value = fallback
	}
	return time.Duration(value) * time.Second
}
